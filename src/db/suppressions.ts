// The suppression list of an account: canonical addresses that queued mail skips.
import { nowIso } from '../ids';
import { listCount, type PageRequest, readPage } from './paging';

export type SuppressionSource = 'bounce' | 'manual';
export type Suppression = { email: string; reason: string | null; source: SuppressionSource; createdAt: string };

type SuppressionRow = { email: string; reason: string | null; source: SuppressionSource; created_at: string };

const toSuppression = (row: SuppressionRow): Suppression => ({
  email: row.email,
  reason: row.reason,
  source: row.source,
  createdAt: row.created_at,
});

/** Newest first; the total from the counter a trigger keeps (migrations/0001_init.sql). */
export const listSuppressions = (db: D1Database, accountId: string, request: PageRequest) =>
  readPage(
    db,
    {
      select: 'SELECT email, reason, source, created_at FROM suppressions WHERE account_id = ?',
      binds: [accountId],
      order: { time: 'created_at', clock: 'iso', key: 'email', keyOrder: 'ASC' },
      count: listCount(db, 'suppressions', accountId),
    },
    request,
    toSuppression,
  );

/** Adds (or, when it is listed already, re-labels as manual with the new reason) a canonical address. */
export async function addSuppression(
  db: D1Database,
  accountId: string,
  email: string,
  reason: string | null,
): Promise<Suppression> {
  const row = await db
    .prepare(
      `INSERT INTO suppressions (account_id, email, reason, source, created_at) VALUES (?1, ?2, ?3, 'manual', ?4)
       ON CONFLICT (account_id, email) DO UPDATE SET reason = COALESCE(?3, reason), source = 'manual'
       RETURNING email, reason, source, created_at`,
    )
    .bind(accountId, email, reason, nowIso())
    .first<SuppressionRow>();
  return toSuppression(row!);
}

/** Whether the address was on the list. */
export async function removeSuppression(db: D1Database, accountId: string, email: string): Promise<boolean> {
  const result = await db
    .prepare('DELETE FROM suppressions WHERE account_id = ? AND email = ?')
    .bind(accountId, email)
    .run();
  return result.meta.changes > 0;
}
