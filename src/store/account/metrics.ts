import type { AccountSql } from './object-sql';

/** One counter of an hour (migrations/0006_metrics.sql). */
export type HourCount = { hour: number; metric: string; n: number };

/**
 * The counters of an account's mode for the hours in [fromMs, toMs), read through the counters' primary key:
 * at most (hours × metrics) rows, whatever the account has sent.
 */
export async function hourCounts(
  db: AccountSql,
  accountId: string,
  test: boolean,
  fromMs: number,
  toMs: number,
): Promise<HourCount[]> {
  const { results } = await db
    .prepare('SELECT hour, metric, n FROM metric_counts WHERE account_id = ? AND test = ? AND hour >= ? AND hour < ?')
    .bind(accountId, test ? 1 : 0, fromMs, toMs)
    .all<HourCount>();
  return results;
}
