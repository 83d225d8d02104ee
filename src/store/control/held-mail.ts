// Which accounts' objects hold mail back in freeze mode, so that an unfreeze wakes just those (each object also
// looks again every minute on its own, so a wake-up that never came costs a minute, not the mail).
import { nowIso } from '../../ids';

export async function noteHeldMail(db: D1Database, accountId: string): Promise<void> {
  await db.prepare('INSERT OR IGNORE INTO held_mail (account_id, since) VALUES (?, ?)').bind(accountId, nowIso()).run();
}

export async function forgetHeldMail(db: D1Database, accountId: string): Promise<void> {
  await db.prepare('DELETE FROM held_mail WHERE account_id = ?').bind(accountId).run();
}

/** A page of accounts holding mail, in id order after `after`. */
export async function accountsHoldingMail(db: D1Database, after: string, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare('SELECT account_id FROM held_mail WHERE account_id > ? ORDER BY account_id LIMIT ?')
    .bind(after, limit)
    .all<{ account_id: string }>();
  return results.map((r) => r.account_id);
}
