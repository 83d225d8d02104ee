// Rows as retention finds them: finished emails with everything of theirs, webhook deliveries, OTP history
// and idempotency records, written at a time of the test's choosing (through the storage code where it
// takes a time, straight SQL for the rest).
import { env } from 'cloudflare:workers';
import { newId } from '../../src/ids';
import { bodyKeyOf } from '../../src/mail/bodies';
import type { EmailStatus } from '../../src/mail/outcome';
import { deliveriesInsert } from '../../src/store/account/webhooks';
import type { WebhookEvent } from '../../src/webhooks/events';
import { uniqueAddress } from './api';
import { storedEmail } from './delivery';

export const DAY_MS = 86_400_000;
export const daysAgo = (days: number, from = Date.now()) => new Date(from - days * DAY_MS).toISOString();

/** Webhook endpoints that hear every email event, so storing an email writes deliveries too. */
export async function subscribeToEmails(accountId: string) {
  const events = JSON.stringify(['email.queued', 'email.sent', 'email.failed', 'email.suppressed', 'email.canceled']);
  await env.DB.prepare(
    `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at, updated_at)
     VALUES (?1, ?2, 'https://hooks.example.com/postcode', ?3, 'whsec_test', ?4, ?4)`,
  )
    .bind(newId('whk'), accountId, events, new Date().toISOString())
    .run();
}

const EVENT_OF = {
  SENT: 'sent',
  FAILED: 'failed',
  SUPPRESSED: 'suppressed',
  CANCELED: 'canceled',
  DELIVERED: 'delivered',
  BOUNCED: 'bounced',
} as const;

const finalEvent = (emailId: string, status: keyof typeof EVENT_OF): WebhookEvent => ({
  type: `email.${EVENT_OF[status]}`,
  data: { emailId, to: [], subject: 'Retention', status, tags: [], test: false },
});

export type SeededEmail = { id: string; attachmentKey: string };

/**
 * An email stored at `at` (recipients to and cc, a tag, an attachment with its R2 object, its events and
 * webhook deliveries, all delivered), then moved to `status` at the same time, as a delivery would.
 * QUEUED and SCHEDULED stay as stored: SCHEDULED for a time ten days from now.
 */
export async function seedEmail(accountId: string, status: EmailStatus, at: string): Promise<SeededEmail> {
  const id = newId('em');
  const attachmentKey = `attachments/${id}/0`;
  const scheduled = status === 'SCHEDULED' || status === 'CANCELED';
  await storedEmail(accountId, uniqueAddress('kept'), {
    id,
    fromName: null,
    subject: `Retention ${status}`,
    ccAddresses: [uniqueAddress('copy')],
    tags: [{ name: 'kind', value: 'receipt' }],
    attachments: [{ filename: 'receipt.txt', contentType: 'text/plain', contentId: null, size: 7, key: attachmentKey }],
    scheduledAt: scheduled ? new Date(Date.now() + 10 * DAY_MS).toISOString() : null,
    createdAt: at,
  });
  await env.ATTACHMENTS.put(attachmentKey, 'receipt');
  // Its deliveries were made (none is left for the webhook sweep to send).
  const settle = env.DB.prepare(
    `UPDATE webhook_deliveries SET status = 'delivered', attempts = 1, last_status = 200, due_at = NULL, updated_at = ?2
     WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE account_id = ?1) AND status = 'pending'`,
  );
  if (status === 'QUEUED' || status === 'SCHEDULED') {
    await settle.bind(accountId, Date.parse(at)).run();
    return { id, attachmentKey };
  }
  const recipientStatus = status === 'CANCELED' ? 'CANCELED' : status;
  const eventType = EVENT_OF[status];
  await env.DB.batch([
    env.DB.prepare(
      `UPDATE emails SET status = ?2, updated_at = ?3, due_at = NULL, sent_at = CASE WHEN ?2 = 'SENT' THEN ?3 END
       WHERE id = ?1`,
    ).bind(id, status, Date.parse(at)),
    env.DB.prepare('UPDATE email_recipients SET status = ?2 WHERE email_id = ?1').bind(id, recipientStatus),
    env.DB.prepare(
      `INSERT INTO email_events (email_id, seq, type, at)
       VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM email_events WHERE email_id = ?1), ?2, ?3)`,
    ).bind(id, eventType, Date.parse(at)),
    deliveriesInsert(env.DB, accountId, [finalEvent(id, status)], Date.parse(at)),
    settle.bind(accountId, Date.parse(at)),
  ]);
  return { id, attachmentKey };
}

/** How many rows of each kind an email has, and whether its attachment and body are still in R2. */
export async function rowsOfEmail(email: SeededEmail) {
  const count = (sql: string) =>
    env.DB.prepare(sql)
      .bind(email.id)
      .first<{ n: number }>()
      .then((row) => row!.n);
  return {
    emails: await count('SELECT COUNT(*) AS n FROM emails WHERE id = ?'),
    recipients: await count('SELECT COUNT(*) AS n FROM email_recipients WHERE email_id = ?'),
    events: await count('SELECT COUNT(*) AS n FROM email_events WHERE email_id = ?'),
    tags: await count('SELECT COUNT(*) AS n FROM email_tags WHERE email_id = ?'),
    attachments: await count('SELECT COUNT(*) AS n FROM email_attachments WHERE email_id = ?'),
    webhookDeliveries: await count(
      `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE json_extract(data, '$.emailId') = ?`,
    ),
    objects: (await env.ATTACHMENTS.head(email.attachmentKey)) ? 1 : 0,
    bodies: (await env.BODIES.head(bodyKeyOf(email.id))) ? 1 : 0,
  };
}

/** One OTP verification and one idempotency record at `at`. */
export async function seedHistory(accountId: string, at: string) {
  const sessionId = `otp_${crypto.randomUUID()}`;
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO otp_verifications (id, account_id, channel, session_id, email, sent_at, verified_at)
       VALUES (?1, ?2, 'backend', ?3, ?4, ?5, ?5)`,
    ).bind(newId('ver'), accountId, sessionId, uniqueAddress('verified'), Date.parse(at)),
    env.DB.prepare(
      `INSERT INTO otp_outcomes (session_id, account_id, channel, outcome, sent_at, ended_at)
       VALUES (?1, ?2, 'backend', 'verified', ?3, ?3)`,
    ).bind(sessionId, accountId, Date.parse(at)),
    env.DB.prepare(
      `INSERT INTO idempotency_records (account_id, test, idem_key, request_hash, claim_id, response_status,
         response_body, created_at) VALUES (?1, 0, ?2, 'hash', 'req', 200, '{}', ?3)`,
    ).bind(accountId, crypto.randomUUID(), at),
  ]);
}

/** The rows of an account per table (`emails` counts every status). */
export async function accountRows(accountId: string) {
  const row = await env.DB.prepare(
    `SELECT (SELECT COUNT(*) FROM emails WHERE account_id = ?1) AS emails,
       (SELECT COUNT(*) FROM email_recipients r JOIN emails e ON e.id = r.email_id WHERE e.account_id = ?1) AS recipients,
       (SELECT COUNT(*) FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
         WHERE w.account_id = ?1) AS webhookDeliveries,
       (SELECT COUNT(*) FROM otp_verifications WHERE account_id = ?1) AS otpHistory,
       (SELECT COUNT(*) FROM otp_outcomes WHERE account_id = ?1) AS otpOutcomes,
       (SELECT COUNT(*) FROM idempotency_records WHERE account_id = ?1) AS idempotencyRecords`,
  )
    .bind(accountId)
    .first<
      Record<
        'emails' | 'recipients' | 'webhookDeliveries' | 'otpHistory' | 'otpOutcomes' | 'idempotencyRecords',
        number
      >
    >();
  return row!;
}

/** Everything the metrics' counters of an account have counted. */
export async function countedOf(accountId: string): Promise<number> {
  const row = await env.DB.prepare('SELECT COALESCE(SUM(n), 0) AS n FROM metric_counts WHERE account_id = ?')
    .bind(accountId)
    .first<{ n: number }>();
  return row!.n;
}
