/**
 * One page of the rows `from` selects (`FROM … WHERE …`, with its bound values), newest first with ties
 * broken by id so that pages neither repeat nor skip a row, and how many rows there are in all.
 */
export async function newestFirst<Row, T>(
  db: D1Database,
  query: { columns: string; from: string; binds: unknown[] },
  page: number,
  limit: number,
  toItem: (row: Row) => T,
): Promise<{ items: T[]; total: number }> {
  const { columns, from, binds } = query;
  const [rows, count] = await db.batch([
    db
      .prepare(`SELECT ${columns} ${from} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
      .bind(...binds, limit, (page - 1) * limit),
    db.prepare(`SELECT COUNT(*) AS total ${from}`).bind(...binds),
  ]);
  return {
    items: (rows!.results as Row[]).map(toItem),
    total: (count!.results[0] as { total: number }).total,
  };
}

/** Pages of one account's rows of `table`, newest first. */
export const accountRowsNewestFirst =
  <Row, T>(table: string, columns: string, toItem: (row: Row) => T) =>
  (db: D1Database, accountId: string, page: number, limit: number) =>
    newestFirst(db, { columns, from: `FROM ${table} WHERE account_id = ?`, binds: [accountId] }, page, limit, toItem);
