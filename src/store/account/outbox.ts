// The account alarm's view of its mail: QUEUED emails that nothing is delivering and that are overdue, and
// SCHEDULED emails coming due.

import { isoOf } from '../time';
import { eventsInsert } from './email-events';
import type { AccountSql } from './object-sql';

/**
 * A scheduled email gets its queue message (delayed to its time) once it is due within this long; the account's
 * alarm dispatches the rest as their time comes (the object is the truth).
 */
export const SCHEDULE_DISPATCH_SECONDS = 90;

// The statements name their partial indexes (INDEXED BY): without statistics SQLite guesses, and a wrong guess
// reads every email of a status to test the rest of the condition (test/store/account/work-plans.test.ts).

/**
 * Marks up to `limit` overdue emails as due again now and returns their ids: QUEUED, not held, no live
 * delivery lease, and due for longer than `graceSeconds` (their queue message was lost, or its consumer
 * died). Claiming by moving `due_at` means a second alarm running at the same time does not take them
 * too, and each gets a `recovered` event in the same transaction.
 */
export async function claimOverdueEmails(db: AccountSql, graceSeconds: number, limit: number): Promise<string[]> {
  const at = Date.now();
  const overdue = await db
    .prepare(
      `UPDATE emails SET due_at = ?1
       WHERE id IN (
         SELECT id FROM emails INDEXED BY emails_due
         WHERE status = 'QUEUED' AND held = 0 AND due_at < ?2 AND (lease_until IS NULL OR lease_until < ?1)
         ORDER BY due_at LIMIT ?3)
       RETURNING id`,
    )
    .bind(at, at - graceSeconds * 1000, limit)
    .all<{ id: string }>();
  const ids = overdue.results.map((r) => r.id);
  if (ids.length > 0) {
    await db.batch(ids.map((id) => eventsInsert(db, id, [{ type: 'recovered', detail: null }], at)));
  }
  return ids;
}

/**
 * SCHEDULED emails due in (`after`, `until`] (epoch ms), soonest first: those the alarm has not dispatched yet.
 */
export async function listScheduledDue(
  db: AccountSql,
  after: number,
  until: number,
  limit: number,
): Promise<{ id: string; dueAt: string }[]> {
  const rows = await db
    .prepare(
      `SELECT id, due_at FROM emails INDEXED BY emails_scheduled
       WHERE status = 'SCHEDULED' AND due_at > ? AND due_at <= ? ORDER BY due_at LIMIT ?`,
    )
    .bind(after, until, limit)
    .all<{ id: string; due_at: number }>();
  return rows.results.map((r) => ({ id: r.id, dueAt: isoOf(r.due_at) }));
}

/**
 * SCHEDULED emails still waiting `graceSeconds` past their time (their message was lost): each is due again now
 * (so the next look finds it only after another grace period) and returned for a message of its own.
 */
export async function claimOverdueScheduled(db: AccountSql, graceSeconds: number, limit: number): Promise<string[]> {
  const at = Date.now();
  const { results } = await db
    .prepare(
      `UPDATE emails SET due_at = ?1
       WHERE id IN (
         SELECT id FROM emails INDEXED BY emails_scheduled
         WHERE status = 'SCHEDULED' AND due_at < ?2 ORDER BY due_at LIMIT ?3)
       RETURNING id`,
    )
    .bind(at, at - graceSeconds * 1000, limit)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}
