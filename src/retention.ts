// Retention (RETENTION_DAYS): each account's object deletes in its alarm what it has kept long enough: finished
// emails with everything of theirs (their bodies and attachments in R2 too), received mail (its bytes in R2 too),
// settled webhook deliveries, OTP history, and idempotency records past their 24 h. A bounded number of small batches per alarm, each one short
// transaction (figures in docs/decisions.md); the object wakes again at once for the rest.
import { config } from './config';
import type { Bindings } from './env';
import { bodyKeyOf } from './mail/bodies';
import { deleteObjects } from './mail/objects';
import { IDEMPOTENCY_TTL_MS } from './store/account/idempotency';
import type { AccountSql } from './store/account/object-sql';
import {
  deleteEmails,
  deleteExpiredRows,
  deleteInbound,
  type ExpiringRows,
  findExpiredEmails,
  findExpiredInbound,
} from './store/account/retention';
import { oldestExpiring, oldestIdempotencyRecord } from './store/account/work';

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
export type RetentionRun = Record<'emails' | 'inbound' | ExpiringRows, number>;

/**
 * When the account's object has something to delete next (epoch ms), or null when nothing will expire: 1 ms past
 * the oldest row's expiry, since a run deletes what is older than its cutoff.
 */
export async function retentionDueAt(env: Bindings, db: AccountSql): Promise<number | null> {
  const { days } = config(env).retention;
  const times: number[] = [];
  const idempotency = await oldestIdempotencyRecord(db);
  if (idempotency !== null) times.push(idempotency + IDEMPOTENCY_TTL_MS + 1);
  const oldest = days === 0 ? null : await oldestExpiring(db);
  if (oldest !== null) times.push(oldest + days * DAY_MS + 1);
  return times.length === 0 ? null : Math.min(...times);
}

export type Buckets = { bodies: R2Bucket; attachments: R2Bucket };

/**
 * One run in the account's object: deletes what expired by `now`, returning how many of each kind. `buckets`: the
 * account's (its jurisdiction's), the default ones unless given.
 */
export async function deleteExpired(
  env: Bindings,
  db: AccountSql,
  now = new Date(),
  buckets: Buckets = { bodies: env.BODIES, attachments: env.ATTACHMENTS },
): Promise<RetentionRun> {
  const { days } = config(env).retention;
  // Expired idempotency records are dead whatever RETENTION_DAYS says: a new request with the key replaces them.
  const idempotencyRecords = await deleteRows(db, 'idempotencyRecords', new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
  if (days === 0)
    return { emails: 0, inbound: 0, webhookDeliveries: 0, otpHistory: 0, otpOutcomes: 0, idempotencyRecords };
  const cutoff = new Date(now.getTime() - days * DAY_MS);
  return {
    emails: await deleteEmailsBefore(buckets, db, cutoff),
    inbound: await deleteInboundBefore(buckets, db, cutoff),
    webhookDeliveries: await deleteRows(db, 'webhookDeliveries', cutoff),
    otpHistory: await deleteRows(db, 'otpHistory', cutoff),
    otpOutcomes: await deleteRows(db, 'otpOutcomes', cutoff),
    idempotencyRecords,
  };
}

async function deleteEmailsBefore(buckets: Buckets, db: AccountSql, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < RETENTION_BATCHES_PER_RUN; batch++) {
    const expired = await findExpiredEmails(db, cutoff, RETENTION_EMAIL_BATCH);
    // The files go first: should deleting the rows fail, the next run finds the emails again (deleting a
    // missing key does nothing), where the other order could leave files that nothing points at.
    await deleteObjects(buckets.attachments, expired.objectKeys);
    await deleteObjects(buckets.bodies, expired.ids.map(bodyKeyOf));
    if (expired.ids.length > 0) deleted += await deleteEmails(db, expired.ids, cutoff);
    if (expired.ids.length < RETENTION_EMAIL_BATCH) break;
  }
  return deleted;
}

async function deleteInboundBefore(buckets: Buckets, db: AccountSql, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < RETENTION_BATCHES_PER_RUN; batch++) {
    const expired = await findExpiredInbound(db, cutoff, RETENTION_EMAIL_BATCH);
    // The files first, as for emails: a failed delete of the rows finds them again next run.
    await deleteObjects(buckets.attachments, expired.attachmentKeys);
    await deleteObjects(buckets.bodies, expired.rawKeys);
    if (expired.ids.length > 0) deleted += await deleteInbound(db, expired.ids, cutoff);
    if (expired.ids.length < RETENTION_EMAIL_BATCH) break;
  }
  return deleted;
}

async function deleteRows(db: AccountSql, kind: ExpiringRows, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < RETENTION_BATCHES_PER_RUN; batch++) {
    const changes = await deleteExpiredRows(db, kind, cutoff, RETENTION_ROW_BATCH);
    deleted += changes;
    if (changes < RETENTION_ROW_BATCH) break;
  }
  return deleted;
}
