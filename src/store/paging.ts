// Pages of a list, newest first: by number (`page`, an OFFSET) or after a cursor (`after`, the previous
// page's `nextCursor`), which starts where that page ended however deep it is. A cursor names the last row
// of its page (its time and key) and the number of the page it leads to.
import type { Sql, SqlStatement } from './sql';

/**
 * A row's time is ISO text or epoch milliseconds, as its table keeps it (migrations/0002_compact_rows.sql); a
 * cursor given in the other form names the same instant (see `positionTime`).
 */
export type Cursor = { page: number; at: string | number; key: string };

/** The latest instant a Date holds, in milliseconds. */
const MAX_TIME_MS = 8_640_000_000_000_000;

/** Where a page starts and how long it is; `page` is the cursor's when there is one. */
export type PageRequest = { limit: number; page: number; after: Cursor | null };

/** A page's rows and the cursor of the next page (null on the last). */
export type Page<T> = { items: T[]; nextCursor: string | null };

const toBase64Url = (text: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text)))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');

export const encodeCursor = (cursor: Cursor) => toBase64Url(JSON.stringify([cursor.page, cursor.at, cursor.key]));

/** The cursor in a `nextCursor`, or null when the text is not one. */
export function decodeCursor(text: string): Cursor | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
    const value: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))));
    if (!Array.isArray(value) || value.length !== 3) return null;
    const [page, at, key] = value as unknown[];
    if (!Number.isInteger(page) || (page as number) < 2 || (page as number) > 1_000_000) return null;
    const time =
      (typeof at === 'string' && at.length <= 40 && !Number.isNaN(Date.parse(at))) ||
      (Number.isSafeInteger(at) && (at as number) >= 0 && (at as number) <= MAX_TIME_MS);
    if (!time || typeof key !== 'string' || key.length > 320) return null;
    return { page: page as number, at: at as string | number, key };
  } catch {
    return null;
  }
}

/**
 * How a list is ordered: newest `time` first, ties broken by `key` (unique), descending or ascending; `clock`
 * is how its table keeps `time`.
 */
export type ListOrder = { time: string; clock: 'ms' | 'iso'; key: string; keyOrder?: 'DESC' | 'ASC' };

/** The cursor's time in the list's own form, whichever form the cursor has it in. */
const positionTime = (at: string | number, clock: ListOrder['clock']) => {
  if (clock === 'ms') return typeof at === 'number' ? at : Date.parse(at);
  return typeof at === 'string' ? at : new Date(at).toISOString();
};

/**
 * The parts of a page's query, with `?` placeholders: `position` goes in the WHERE (rows after the cursor),
 * `tail` ends the query (order, and one row more than the page, to tell whether another follows).
 */
export function pageQueryParts(order: ListOrder, request: PageRequest) {
  const keyOrder = order.keyOrder ?? 'DESC';
  const after = request.after;
  const at = after ? positionTime(after.at, order.clock) : null;
  // `time <= ?` bounds the index range; the OR leaves out the rows of the cursor's time up to its key.
  const position = after
    ? {
        sql: `AND ${order.time} <= ? AND (${order.time} < ? OR ${order.key} ${keyOrder === 'DESC' ? '<' : '>'} ?)`,
        binds: [at, at, after.key],
      }
    : { sql: '', binds: [] };
  const offset = after ? 0 : (request.page - 1) * request.limit;
  return {
    position,
    tail: {
      sql: `ORDER BY ${order.time} DESC, ${order.key} ${keyOrder} LIMIT ? OFFSET ?`,
      binds: [request.limit + 1, offset],
    },
  };
}

/** The page from the rows its query returned (one more than the page when another follows). */
export function pageFromRows<Row, T>(
  rows: Row[],
  request: PageRequest,
  positionOf: (row: Row) => { at: string | number; key: string },
  toItem: (row: Row) => T,
): Page<T> {
  const items = rows.slice(0, request.limit);
  const last = items.at(-1);
  const nextCursor =
    rows.length > request.limit && last ? encodeCursor({ page: request.page + 1, ...positionOf(last) }) : null;
  return { items: items.map(toItem), nextCursor };
}

/**
 * One page of `select` (`SELECT … FROM … WHERE …`, with its bound values) in `order`, whose row columns
 * are named as `order`'s, and the total that `count` reads (`{ total }`), in one round trip.
 */
export async function readPage<Row extends Record<string, unknown>, T>(
  db: Sql,
  query: { select: string; binds: unknown[]; order: ListOrder; count: SqlStatement },
  request: PageRequest,
  toItem: (row: Row) => T,
): Promise<Page<T> & { total: number }> {
  const { select, binds, order, count } = query;
  const { position, tail } = pageQueryParts(order, request);
  const [rows, counted] = await db.batch([
    db.prepare(`${select} ${position.sql} ${tail.sql}`).bind(...binds, ...position.binds, ...tail.binds),
    count,
  ]);
  const positionOf = (row: Row) => ({ at: row[order.time] as string | number, key: String(row[order.key]) });
  const page = pageFromRows(rows!.results as Row[], request, positionOf, toItem);
  return { ...page, total: (counted!.results[0] as { total: number }).total };
}

/**
 * One page of the rows `from` selects (`FROM … WHERE …`, with its bound values), newest first, and how many
 * rows there are in all (for lists that stay small: the growing ones keep counters).
 */
export const newestFirst = <Row extends Record<string, unknown>, T>(
  db: Sql,
  query: { columns: string; from: string; binds: unknown[] },
  request: PageRequest,
  toItem: (row: Row) => T,
) =>
  readPage(
    db,
    {
      select: `SELECT ${query.columns} ${query.from}`,
      binds: query.binds,
      order: { time: 'created_at', clock: 'iso', key: 'id' },
      count: db.prepare(`SELECT COUNT(*) AS total ${query.from}`).bind(...query.binds),
    },
    request,
    toItem,
  );

/** The statement reading a list's counter (`list_counts`, kept by triggers): `{ total }`. */
export const listCount = (db: Sql, list: 'suppressions' | 'webhook_deliveries', ownerId: string) =>
  db
    .prepare('SELECT COALESCE(SUM(n), 0) AS total FROM list_counts WHERE list = ? AND owner_id = ?')
    .bind(list, ownerId);

/** Pages of one account's rows of `table`, newest first. */
export const accountRowsNewestFirst =
  <Row extends Record<string, unknown>, T>(table: string, columns: string, toItem: (row: Row) => T) =>
  (db: Sql, accountId: string, request: PageRequest) =>
    newestFirst(db, { columns, from: `FROM ${table} WHERE account_id = ?`, binds: [accountId] }, request, toItem);
