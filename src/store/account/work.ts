// When an account's object must wake next (its alarm): the times its tables name, each read through an index
// in one short statement, so that planning costs a few lookups whatever the account holds. (A QUEUED email and a
// pending delivery always have a due time: `due_at IS NOT NULL` lets the lookup start in the index.)

import type { AccountSql } from './object-sql';

/** What is waiting in the account's object. */
export type WaitingWork = {
  /** Mail or webhook deliveries on their way (QUEUED emails, pending deliveries): checked within the grace. */
  inFlight: boolean;
  /** Held mail (freeze mode). */
  held: boolean;
  /** Bodies of accepted emails not yet moved to R2. */
  bodies: boolean;
  /** The earliest SCHEDULED email not dispatched yet (its due time, epoch ms). */
  nextScheduled: number | null;
  /** The earliest SCHEDULED email already dispatched (a lost message is found once it is overdue). */
  dispatchedScheduled: number | null;
};

/** `dispatchedUntil`: scheduled mail due up to then has its queue message. */
export async function waitingWork(db: AccountSql, dispatchedUntil: number): Promise<WaitingWork> {
  const row = await db
    .prepare(
      `SELECT
         EXISTS (SELECT 1 FROM emails INDEXED BY emails_due WHERE status = 'QUEUED' AND due_at IS NOT NULL) AS queued,
         EXISTS (SELECT 1 FROM webhook_deliveries INDEXED BY webhook_deliveries_due
           WHERE status = 'pending' AND due_at IS NOT NULL) AS pending,
         EXISTS (SELECT 1 FROM emails INDEXED BY emails_held WHERE held = 1) AS held,
         EXISTS (SELECT 1 FROM email_bodies WHERE email_id > '') AS bodies,
         (SELECT MIN(due_at) FROM emails INDEXED BY emails_scheduled WHERE status = 'SCHEDULED' AND due_at > ?1) AS next,
         (SELECT MIN(due_at) FROM emails INDEXED BY emails_scheduled WHERE status = 'SCHEDULED' AND due_at <= ?1)
           AS dispatched`,
    )
    .bind(dispatchedUntil)
    .first<{
      queued: number;
      pending: number;
      held: number;
      bodies: number;
      next: number | null;
      dispatched: number | null;
    }>();
  return {
    inFlight: row!.queued === 1 || row!.pending === 1,
    held: row!.held === 1,
    bodies: row!.bodies === 1,
    nextScheduled: row!.next,
    dispatchedScheduled: row!.dispatched,
  };
}

/**
 * The earliest time something kept here expires (epoch ms, before the retention period is added): finished
 * emails, settled webhook deliveries, OTP history and outcomes. Null when nothing can expire.
 */
export async function oldestExpiring(db: AccountSql): Promise<number | null> {
  const row = await db
    .prepare(
      `SELECT NULLIF(MIN(
         COALESCE((SELECT MIN(updated_at) FROM emails INDEXED BY emails_final_updated
           WHERE status IN ('SENT', 'FAILED', 'CANCELED', 'SUPPRESSED', 'DELIVERED', 'BOUNCED')), ?1),
         COALESCE((SELECT MIN(updated_at) FROM webhook_deliveries INDEXED BY webhook_deliveries_settled
           WHERE status IN ('delivered', 'failed')), ?1),
         COALESCE((SELECT MIN(verified_at) FROM otp_verifications), ?1),
         COALESCE((SELECT MIN(ended_at) FROM otp_outcomes), ?1),
         COALESCE((SELECT MIN(received_at) FROM inbound_messages), ?1)), ?1) AS oldest`,
    )
    .bind(Number.MAX_SAFE_INTEGER)
    .first<{ oldest: number | null }>();
  return row?.oldest ?? null;
}

/** The oldest idempotency record's time (epoch ms), or null. */
export async function oldestIdempotencyRecord(db: AccountSql): Promise<number | null> {
  const row = await db
    .prepare('SELECT MIN(created_at) AS oldest FROM idempotency_records')
    .first<{ oldest: string | null }>();
  return row?.oldest ? Date.parse(row.oldest) : null;
}

/** A value the object keeps about itself (its account, what it has dispatched). */
export async function objectState(db: AccountSql, key: string): Promise<string | null> {
  return db.prepare('SELECT value FROM object_state WHERE key = ?').bind(key).first<string>('value');
}

export async function setObjectState(db: AccountSql, key: string, value: string): Promise<void> {
  await db
    .prepare('INSERT INTO object_state (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2')
    .bind(key, value)
    .run();
}
