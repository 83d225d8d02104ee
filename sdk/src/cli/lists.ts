// How every list command reads its pages: one page (--limit, --after), or with --all every item of every page,
// following nextCursor.
import { type PagedList, PostcodeRequestError } from '../index.js';
import { apiFailure, type Context, dataOf, type FlagSpec, type Printed } from './command.js';
import { pageText } from './output.js';

/** --limit, --after and --all, as every list takes them. */
export const LIST_FLAGS: FlagSpec[] = [
  { name: 'limit', type: 'string', value: 'N', summary: 'Items per page (1-100)' },
  { name: 'after', type: 'string', value: 'CURSOR', summary: 'The page after the one whose nextCursor this is' },
  { name: 'all', type: 'boolean', summary: 'Every page: JSON is then one array of every item' },
];

/** The query of LIST_FLAGS (--all pages with --limit as the page size). */
export function pageQuery(ctx: Context): { limit?: number; after?: string } {
  const limit = ctx.flags.integer('limit');
  const after = ctx.flags.string('after');
  return { ...(limit !== undefined ? { limit } : {}), ...(after !== undefined ? { after } : {}) };
}

/** Every item of every page; a page that cannot be read is the API's error, as any call's. */
export async function everyItem<P extends { nextCursor: string | null }, Item>(
  list: PagedList<P, Item>,
): Promise<Item[]> {
  const items: Item[] = [];
  try {
    for await (const item of list) items.push(item);
  } catch (error) {
    throw error instanceof PostcodeRequestError ? apiFailure(error.error) : error;
  }
  return items;
}

/**
 * A list command's answer: the page as the API answers it (its items, total and nextCursor), or with --all one
 * array of every item of every page.
 */
export async function listed<P extends { nextCursor: string | null; total?: number }, Item>(
  ctx: Context,
  list: PagedList<P, Item>,
  itemsOf: (page: P) => Item[],
  text: (items: Item[]) => string,
): Promise<Printed> {
  if (ctx.flags.boolean('all')) {
    const items = await everyItem(list);
    return { data: items, human: () => `${text(items)}${items.length} shown\n` };
  }
  const page = dataOf(await list);
  return { data: page, human: () => pageText(text(itemsOf(page)), page, itemsOf(page).length) };
}
