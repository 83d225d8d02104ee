// Retention (RETENTION_DAYS): the scheduled handler deletes, after its sweeps, what has been kept long
// enough: finished emails with everything of theirs (their bodies and attachments in R2 too), settled webhook
// deliveries, OTP history, and idempotency records past their 24 h. A bounded number of small batches per
// run, each one short transaction (figures in docs/decisions.md); the next run takes the rest.
import { config } from './config';
import type { Bindings } from './env';
import { bodyKeyOf } from './mail/bodies';
import { deleteObjects } from './mail/objects';
import { IDEMPOTENCY_TTL_MS } from './store/account/idempotency';
import { deleteEmails, deleteExpiredRows, type ExpiringRows, findExpiredEmails } from './store/account/retention';

/** Emails per transaction (with their recipients, events, tags and attachments: about ten rows each). */
export const RETENTION_EMAIL_BATCH = 200;
/** Rows of a single table per statement (webhook deliveries, OTP history, idempotency records). */
export const RETENTION_ROW_BATCH = 1_000;
/** Batches of each kind per run. */
export const RETENTION_BATCHES_PER_RUN = 5;

/** What the API reference says of the lists retention deletes from. */
export const RETENTION_NOTE = {
  entries: 'Entries older than RETENTION_DAYS (default 30) are deleted.',
  emails:
    'Entries older than RETENTION_DAYS (default 30) are deleted: an email counts from when it reached SENT, FAILED, CANCELED or SUPPRESSED; QUEUED and SCHEDULED emails are kept.',
  deliveries:
    'Entries older than RETENTION_DAYS (default 30) are deleted (counted from their last attempt; pending ones are kept).',
} as const;

const DAY_MS = 86_400_000;
export type RetentionRun = Record<'emails' | ExpiringRows, number>;

/** One run: deletes what expired by `now`, returning how many of each kind. */
export async function deleteExpired(env: Bindings, now = new Date()): Promise<RetentionRun> {
  const { days } = config(env).retention;
  // Expired idempotency records are dead whatever RETENTION_DAYS says: a new request with the key replaces them.
  const idempotencyRecords = await deleteRows(
    env.DB,
    'idempotencyRecords',
    new Date(now.getTime() - IDEMPOTENCY_TTL_MS),
  );
  if (days === 0) return { emails: 0, webhookDeliveries: 0, otpHistory: 0, otpOutcomes: 0, idempotencyRecords };
  const cutoff = new Date(now.getTime() - days * DAY_MS);
  return {
    emails: await deleteEmailsBefore(env, cutoff),
    webhookDeliveries: await deleteRows(env.DB, 'webhookDeliveries', cutoff),
    otpHistory: await deleteRows(env.DB, 'otpHistory', cutoff),
    otpOutcomes: await deleteRows(env.DB, 'otpOutcomes', cutoff),
    idempotencyRecords,
  };
}

async function deleteEmailsBefore(env: Bindings, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < RETENTION_BATCHES_PER_RUN; batch++) {
    const expired = await findExpiredEmails(env.DB, cutoff, RETENTION_EMAIL_BATCH);
    // The files go first: should deleting the rows fail, the next run finds the emails again (deleting a
    // missing key does nothing), where the other order could leave files that nothing points at.
    await deleteObjects(env.ATTACHMENTS, expired.objectKeys);
    await deleteObjects(env.BODIES, expired.ids.map(bodyKeyOf));
    if (expired.ids.length > 0) deleted += await deleteEmails(env.DB, expired.ids, cutoff);
    if (expired.ids.length < RETENTION_EMAIL_BATCH) break;
  }
  return deleted;
}

async function deleteRows(db: D1Database, kind: ExpiringRows, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < RETENTION_BATCHES_PER_RUN; batch++) {
    const changes = await deleteExpiredRows(db, kind, cutoff, RETENTION_ROW_BATCH);
    deleted += changes;
    if (changes < RETENTION_ROW_BATCH) break;
  }
  return deleted;
}
