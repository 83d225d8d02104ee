// The outbox sweep's view of D1: QUEUED emails that nothing is delivering and that are overdue.

import { isoOf } from '../time';
import { eventsInsert } from './email-events';

/**
 * A scheduled email gets its queue message (delayed to its time) once it is due within this long; the
 * scheduled handler, every minute, dispatches the rest as their time comes (D1 is the truth).
 */
export const SCHEDULE_DISPATCH_SECONDS = 90;

// The sweeps name their partial indexes (INDEXED BY): without statistics SQLite guesses, and a wrong guess
// reads every email of a status to test the rest of the condition (test/db/sweep-plans.test.ts).

/**
 * Marks up to `limit` overdue emails as due again now and returns their ids: QUEUED, not held, no live
 * delivery lease, and due for longer than `graceSeconds` (their queue message was lost, or its consumer
 * died). Claiming by moving `due_at` means a second sweep running at the same time does not take them
 * too, and each gets a `recovered` event in the same transaction.
 */
export async function claimOverdueEmails(db: D1Database, graceSeconds: number, limit: number): Promise<string[]> {
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
 * SCHEDULED emails due within `withinSeconds` (overdue ones included: their message was lost, or is still
 * on its way), soonest first, for the scheduled handler to queue with a delay up to their time.
 */
export async function listScheduledDue(
  db: D1Database,
  withinSeconds: number,
  limit: number,
): Promise<{ id: string; dueAt: string }[]> {
  const rows = await db
    .prepare(
      `SELECT id, due_at FROM emails INDEXED BY emails_scheduled
       WHERE status = 'SCHEDULED' AND due_at <= ? ORDER BY due_at LIMIT ?`,
    )
    .bind(Date.now() + withinSeconds * 1000, limit)
    .all<{ id: string; due_at: number }>();
  return rows.results.map((r) => ({ id: r.id, dueAt: isoOf(r.due_at) }));
}
