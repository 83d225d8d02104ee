// `postcode suppressions add|remove|list`: the addresses the account's mail never goes to.
import type { BodyOf, DataOf } from '../../index.js';
import { type Command, dataOf } from '../command.js';
import { LIST_FLAGS, listed, pageQuery } from '../lists.js';
import { table } from '../output.js';

type Suppression = DataOf<'getApiV1Suppressions'>['suppressions'][number];

const rows = (suppressions: Suppression[]) =>
  table(
    ['EMAIL', 'REASON', 'CREATED', 'EXPIRES', 'NOTE'],
    suppressions.map((s) => [s.email, s.reason, s.createdAt, s.expiresAt ?? 'never', s.note]),
  );

const add: Command = {
  path: ['suppressions', 'add'],
  summary: 'Stops mail to an address (until --expires-at, else for good)',
  args: [{ name: 'email', summary: 'The address', required: true }],
  flags: [
    { name: 'reason', type: 'string', value: 'manual', summary: 'Why: entries added here are manual' },
    { name: 'note', type: 'string', value: 'TEXT', summary: 'A note kept with the entry' },
    { name: 'expires-at', type: 'string', value: 'TIME', summary: 'When it stops blocking (ISO 8601)' },
  ],
  details: `  postcode suppressions add ada@example.com --note "asked by phone"`,
  async run(ctx) {
    const { flags } = ctx;
    const body: BodyOf<'postApiV1Suppressions'> = {
      email: ctx.args.email!,
      ...(flags.has('reason') ? { reason: flags.string('reason') as 'manual' } : {}),
      ...(flags.has('note') ? { note: flags.string('note') } : {}),
      ...(flags.has('expires-at') ? { expiresAt: flags.string('expires-at') } : {}),
    };
    const data = dataOf(await ctx.client().suppressions.add(body));
    return { data, human: () => `Suppressed ${data.email} (${data.reason}) until ${data.expiresAt ?? 'removed'}.\n` };
  },
};

const remove: Command = {
  path: ['suppressions', 'remove'],
  summary: 'Lets mail go to an address again',
  args: [{ name: 'email', summary: 'The address', required: true }],
  flags: [],
  async run(ctx) {
    const data = dataOf(await ctx.client().suppressions.remove(ctx.args.email!));
    return { data, human: () => `Removed ${data.email} from the suppression list.\n` };
  },
};

const list: Command = {
  path: ['suppressions', 'list'],
  summary: 'Lists the suppressed addresses',
  flags: LIST_FLAGS,
  details: `JSON: the page as the API answers it ({ suppressions, total, page, totalPages, nextCursor }); with --all,
one array of every entry.`,
  async run(ctx) {
    return listed(ctx, ctx.client().suppressions.list(pageQuery(ctx)), (page) => page.suppressions, rows);
  },
};

export const suppressionCommands: Command[] = [add, list, remove];
