// The delivery state of stored emails, as the queue consumer moves it: leases, attempts recorded per
// message, per-recipient outcomes, suppressions and the email's timeline.

import { nowIso } from '../../ids';
import type { AttemptResult, Recipient } from '../../mail/outcome';
import type { WebhookEvent } from '../../webhooks/events';
import { bodiesHere, type EmailBody } from './bodies';
import { eventsInsert } from './email-events';
import { EMAIL_STATUS_SQL, type EmailRecord, type EmailRow, SELECT_EMAIL, toEmail } from './emails';
import type { AccountSql } from './object-sql';
import { SCHEDULE_DISPATCH_SECONDS } from './outbox';
import { SUPPRESSION_CONFLICT, SUPPRESSION_UPSERT, suppressedNow } from './suppressions';
import { deliveriesInsert, insertedIds } from './webhooks';

/** A message may arrive a little before the time its row is due (clocks, queue delays); never a scheduled one's. */
const DUE_SLACK_MS = 5_000;

export type DeliveryClaim =
  | { kind: 'claimed'; email: EmailRecord; recipients: Recipient[]; suppressed: Set<string> }
  | { kind: 'done' } // unknown, finished, or not due yet (a later message or the alarm brings it back)
  | { kind: 'held' } // held for freeze mode: it is queued again on release
  | { kind: 'busy'; retryInSeconds: number }; // another consumer holds the lease, or a scheduled time is near

type RecipientRow = {
  email_id: string;
  position: number;
  address: string;
  canonical: string | null;
  status: Recipient['status'];
  reply: string | null;
  suppressed: number;
};

const toRecipient = (row: RecipientRow): Recipient => ({
  position: row.position,
  address: row.address,
  canonical: row.canonical ?? row.address.toLowerCase(),
  status: row.status,
  reply: row.reply,
});

/**
 * Takes the delivery lease of due, QUEUED emails, so that two deliveries of one email (queues deliver at
 * least once; the account alarm may queue it again) cannot both send it. One round trip for the whole batch:
 * the update and the reads (rows, recipients, which of them are suppressed) run in one transaction.
 */
export async function claimForDelivery(
  db: AccountSql,
  ids: string[],
  leaseSeconds: number,
): Promise<{ owner: string; claims: Map<string, DeliveryClaim>; bodies: Record<string, EmailBody> }> {
  const now = Date.now();
  const owner = crypto.randomUUID();
  const idList = JSON.stringify(ids);
  const [, selected, recipientRows] = await db.batch([
    db
      .prepare(
        `UPDATE emails SET lease_until = ?1, lease_owner = ?4, status = 'QUEUED'
         WHERE id IN (SELECT value FROM json_each(?2)) AND status IN ('QUEUED', 'SCHEDULED') AND held = 0
           AND (lease_until IS NULL OR lease_until < ?3)
           AND (due_at IS NULL OR due_at <= CASE status WHEN 'SCHEDULED' THEN ?3 ELSE ?5 END)`,
      )
      .bind(now + leaseSeconds * 1000, idList, now, owner, now + DUE_SLACK_MS),
    db.prepare(`${SELECT_EMAIL} WHERE e.id IN (SELECT value FROM json_each(?))`).bind(idList),
    db
      .prepare(
        `SELECT r.email_id, r.position, r.address, r.canonical, r.status, r.reply, s.email IS NOT NULL AS suppressed
         FROM email_recipients r JOIN emails e ON e.id = r.email_id AND e.lease_owner = ?2
           LEFT JOIN suppressions s ON s.account_id = e.account_id AND s.email = r.canonical AND ${suppressedNow('?3')}
         WHERE r.email_id IN (SELECT value FROM json_each(?1)) ORDER BY r.email_id, r.position`,
      )
      .bind(idList, owner, now),
  ]);
  type ClaimRow = EmailRow & {
    held: number;
    lease_until: number | null;
    lease_owner: string | null;
    due_at: number | null;
  };
  const rows = new Map((selected!.results as ClaimRow[]).map((row) => [row.id, row]));
  const recipients = new Map<string, RecipientRow[]>();
  for (const row of recipientRows!.results as RecipientRow[]) {
    recipients.set(row.email_id, [...(recipients.get(row.email_id) ?? []), row]);
  }
  const claims = new Map<string, DeliveryClaim>();
  for (const id of ids) {
    const row = rows.get(id);
    if (row?.status === 'SCHEDULED') claims.set(id, scheduledLater(row.due_at, now));
    else if (row?.status !== 'QUEUED') claims.set(id, { kind: 'done' });
    else if (row.held === 1) claims.set(id, { kind: 'held' });
    else if (row.lease_owner === owner) {
      const list = recipients.get(id) ?? [];
      const suppressed = new Set(list.filter((r) => r.suppressed === 1).map((r) => r.canonical ?? ''));
      claims.set(id, { kind: 'claimed', email: toEmail(row), recipients: list.map(toRecipient), suppressed });
    } else if (row.lease_until !== null && row.lease_until > now) {
      const retryInSeconds = Math.max(Math.ceil((row.lease_until - now) / 1000), 1);
      claims.set(id, { kind: 'busy', retryInSeconds });
    } else claims.set(id, { kind: 'done' }); // not due yet
  }
  // Bodies not yet moved to R2 come with their claim.
  const claimed = [...claims].filter(([, claim]) => claim.kind === 'claimed').map(([id]) => id);
  return { owner, claims, bodies: claimed.length > 0 ? await bodiesHere(db, claimed) : {} };
}

/**
 * A SCHEDULED email whose message came before its time (a delay cut short, or a message of an earlier
 * time after a PATCH): wait for the time when it is near, else leave it to the scheduled handler.
 */
function scheduledLater(dueAt: number | null, now: number): DeliveryClaim {
  const seconds = dueAt === null ? 0 : Math.ceil((dueAt - now) / 1000);
  return seconds > 0 && seconds <= SCHEDULE_DISPATCH_SECONDS
    ? { kind: 'busy', retryInSeconds: seconds }
    : { kind: 'done' };
}

export type AttemptRecord = {
  email: Pick<EmailRecord, 'id' | 'accountId'>;
  result: AttemptResult;
  /** Whether SMTP was tried (an attempt counts); false when every recipient was skipped. */
  attempted: boolean;
  /** When the email is due again if it still waits. */
  retryAt: Date | null;
  /** This consumer's lease: only a row it still holds changes, and the rest of its batch keeps theirs. */
  owner: string;
  /** Set: the rest of the batch's lease is renewed to this many seconds from now (null: not this time). */
  renewLeaseSeconds: number | null;
  /** Webhook events of the attempt, recorded with it. */
  webhookEvents: WebhookEvent[];
};

/**
 * Records one attempt as soon as the server has answered, in one transaction: its webhook deliveries,
 * the recipients, the timeline, new suppressions, the email row (which frees its lease), and when asked a
 * longer lease for the rest of this consumer's batch, so that a lease left by a crash runs out soon after
 * the last message it covered.
 * Returns the ids of the webhook deliveries to queue.
 */
export async function recordAttempt(db: AccountSql, record: AttemptRecord): Promise<string[]> {
  const { email, result, owner } = record;
  const now = new Date();
  const at = now.getTime();
  const ownsRow = `EXISTS (SELECT 1 FROM emails WHERE id = ?1 AND lease_owner = ?2 AND status = 'QUEUED')`;
  const changed = result.recipients.map((r) => ({
    position: r.position,
    status: r.status,
    reply: r.reply,
    route: r.route ?? null,
    providerId: r.providerId ?? null,
  }));
  const results = await db.batch([
    deliveriesInsert(
      db,
      email.accountId,
      record.webhookEvents,
      at,
      `EXISTS (SELECT 1 FROM emails WHERE id = ?4 AND lease_owner = ?5 AND status = 'QUEUED')`,
      [email.id, owner],
    ),
    db
      .prepare(
        `UPDATE email_recipients AS r SET status = json_extract(j.value, '$.status'),
           reply = json_extract(j.value, '$.reply'), route = json_extract(j.value, '$.route'),
           provider_id = json_extract(j.value, '$.providerId')
         FROM json_each(?3) AS j
         WHERE r.email_id = ?1 AND r.position = json_extract(j.value, '$.position') AND r.status = 'QUEUED'
           AND ${ownsRow}`,
      )
      .bind(email.id, owner, JSON.stringify(changed)),
    eventsInsert(db, email.id, result.events, at, ownsRow, owner),
    // Only what changes something: new suppressions, and the rest of the batch's lease when it is due.
    ...(result.suppress.length > 0
      ? [
          db
            .prepare(
              `${SUPPRESSION_UPSERT} SELECT ?3, j.value, 'rcpt_rejected', ?4, ?1, NULL, 'bounce', ?5
               FROM json_each(?6) AS j WHERE ${ownsRow} ${SUPPRESSION_CONFLICT}`,
            )
            .bind(email.id, owner, email.accountId, result.reply, nowIso(now), JSON.stringify(result.suppress)),
        ]
      : []),
    ...(record.renewLeaseSeconds === null
      ? []
      : [
          db
            .prepare('UPDATE emails SET lease_until = ?1 WHERE lease_owner = ?2 AND id <> ?3 AND status = ?4')
            .bind(at + record.renewLeaseSeconds * 1000, owner, email.id, 'QUEUED'),
        ]),
    db
      .prepare(
        `UPDATE emails SET status = CASE ?3 WHEN 'QUEUED' THEN 'QUEUED' ELSE ${EMAIL_STATUS_SQL} END,
           last_reply = COALESCE(?4, last_reply), attempts = attempts + ?5,
           updated_at = ?6, lease_until = NULL, lease_owner = NULL, due_at = ?7,
           sent_at = CASE WHEN ?3 = 'SENT' THEN COALESCE(sent_at, ?6) ELSE sent_at END
         WHERE id = ?1 AND lease_owner = ?2 AND status = 'QUEUED'`,
      )
      .bind(
        email.id,
        owner,
        result.status,
        result.reply,
        record.attempted ? 1 : 0,
        at,
        record.retryAt ? record.retryAt.getTime() : null,
      ),
  ]);
  return insertedIds(results[0]);
}

/**
 * Attempts of one consumer's batch recorded in one call and one transaction, each as `recordAttempt` does: the
 * outcomes that came in while the previous call was written. The ids of each one's webhook deliveries.
 */
export async function recordAttempts(db: AccountSql, records: AttemptRecord[]): Promise<string[][]> {
  const ids: string[][] = [];
  for (const record of records) ids.push(await recordAttempt(db, record));
  return ids;
}

/** Freeze mode: park a NORMAL email until release. */
export async function holdEmail(db: AccountSql, id: string, owner: string): Promise<void> {
  const at = Date.now();
  const ownsRow = `EXISTS (SELECT 1 FROM emails WHERE id = ?1 AND lease_owner = ?2 AND status = 'QUEUED')`;
  await db.batch([
    eventsInsert(db, id, [{ type: 'held', detail: null }], at, ownsRow, owner),
    db
      .prepare(
        `UPDATE emails SET held = 1, lease_until = NULL, lease_owner = NULL, updated_at = ?3
         WHERE id = ?1 AND lease_owner = ?2 AND status = 'QUEUED'`,
      )
      .bind(id, owner, at),
  ]);
}

/** Renews the lease of this consumer's emails still QUEUED (a batch's other accounts, while it sends one's). */
export async function renewLease(db: AccountSql, owner: string, leaseSeconds: number): Promise<void> {
  await db
    .prepare("UPDATE emails SET lease_until = ?1 WHERE lease_owner = ?2 AND status = 'QUEUED'")
    .bind(Date.now() + leaseSeconds * 1000, owner)
    .run();
}
