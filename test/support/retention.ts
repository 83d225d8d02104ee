// Rows as retention finds them in an account's object: finished emails with everything of theirs, webhook
// deliveries, OTP history and idempotency records, written at a time of the test's choosing (through the storage
// code where it takes a time, straight SQL for the rest), and retention run inside the object.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { newEmailId, newId } from '../../src/ids';
import { bodyKeyOf, storeBodies } from '../../src/mail/bodies';
import type { EmailStatus } from '../../src/mail/outcome';
import { deleteExpired } from '../../src/retention';
import { insertEmail } from '../../src/store/account/email-store';
import type { NewEmail } from '../../src/store/account/emails';
import { ObjectSql } from '../../src/store/account/object-sql';
import { deliveriesInsert } from '../../src/store/account/webhooks';
import { objectState, setObjectState } from '../../src/store/account/work';
import type { WebhookEvent } from '../../src/webhooks/events';
import { uniqueAddress } from './api';
import { storedEmail, testEmail } from './delivery';

export const DAY_MS = 86_400_000;
export const daysAgo = (days: number, from = Date.now()) => new Date(from - days * DAY_MS).toISOString();

/** The account's object (made if it does not exist yet). */
export const accountStub = (accountId: string) => env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId));

/**
 * Runs `use` inside the account's object with its database and storage. The object is told whose it is, as its
 * first operation would (its alarm does nothing for an object that does not know its account); nothing here
 * sets its alarm.
 */
export function inAccountObject<R>(
  accountId: string,
  use: (db: ObjectSql, storage: DurableObjectStorage) => Promise<R>,
): Promise<R> {
  return runInDurableObject(accountStub(accountId), async (_instance, state) => {
    const db = new ObjectSql(state.storage);
    if ((await objectState(db, 'account')) === null) await setObjectState(db, 'account', accountId);
    return use(db, state.storage);
  });
}

/** One run of retention inside the account's object, with these bindings (RETENTION_DAYS) and clock. */
export const runRetention = (accountId: string, bindings: Cloudflare.Env = env, now = new Date()) =>
  inAccountObject(accountId, (db) => deleteExpired(bindings, db, now));

/** Webhook endpoints that hear every email event, so storing an email writes deliveries too. */
export async function subscribeToEmails(accountId: string) {
  const events = JSON.stringify(['email.queued', 'email.sent', 'email.failed', 'email.suppressed', 'email.canceled']);
  await inAccountObject(accountId, (db) =>
    db
      .prepare(
        `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at, updated_at)
         VALUES (?1, ?2, 'https://hooks.example.com/postcode', ?3, 'whsec_test', ?4, ?4)`,
      )
      .bind(newId('whk'), accountId, events, new Date().toISOString())
      .run(),
  );
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

export type SeededEmail = { id: string; accountId: string; attachmentKey: string };

/** Moves a stored email to `status` at `at` as a delivery would, its webhook deliveries all made. */
async function finish(db: ObjectSql, accountId: string, id: string, status: EmailStatus, at: string) {
  // Its deliveries were made (none is left for the webhook sweep to send).
  const settle = db.prepare(
    `UPDATE webhook_deliveries SET status = 'delivered', attempts = 1, last_status = 200, due_at = NULL, updated_at = ?2
     WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE account_id = ?1) AND status = 'pending'`,
  );
  if (status === 'QUEUED' || status === 'SCHEDULED') {
    await settle.bind(accountId, Date.parse(at)).run();
    return;
  }
  const recipientStatus = status === 'CANCELED' ? 'CANCELED' : status;
  const eventType = EVENT_OF[status];
  await db.batch([
    db
      .prepare(
        `UPDATE emails SET status = ?2, updated_at = ?3, due_at = NULL, sent_at = CASE WHEN ?2 = 'SENT' THEN ?3 END
         WHERE id = ?1`,
      )
      .bind(id, status, Date.parse(at)),
    db.prepare('UPDATE email_recipients SET status = ?2 WHERE email_id = ?1').bind(id, recipientStatus),
    db
      .prepare(
        `INSERT INTO email_events (email_id, seq, type, at)
         VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM email_events WHERE email_id = ?1), ?2, ?3)`,
      )
      .bind(id, eventType, Date.parse(at)),
    deliveriesInsert(db, accountId, [finalEvent(id, status)], Date.parse(at)),
    settle.bind(accountId, Date.parse(at)),
  ]);
}

/** An email as the API would accept it at `at` (to and cc, a tag, an attachment), QUEUED or SCHEDULED. */
function newEmail(accountId: string, status: EmailStatus, at: string): NewEmail {
  const id = newEmailId(accountId);
  const scheduled = status === 'SCHEDULED' || status === 'CANCELED';
  return testEmail(accountId, uniqueAddress('kept'), {
    id,
    fromName: null,
    subject: `Retention ${status}`,
    ccAddresses: [uniqueAddress('copy')],
    tags: [{ name: 'kind', value: 'receipt' }],
    attachments: [
      { filename: 'receipt.txt', contentType: 'text/plain', contentId: null, size: 7, key: `attachments/${id}/0` },
    ],
    scheduledAt: scheduled ? new Date(Date.now() + 10 * DAY_MS).toISOString() : null,
    createdAt: at,
  });
}

const seeded = (email: NewEmail): SeededEmail => ({
  id: email.id,
  accountId: email.accountId,
  attachmentKey: email.attachments[0]!.key,
});

/**
 * Emails stored at their `at` (recipients to and cc, a tag, an attachment with its R2 object, the body, their
 * events and webhook deliveries, all delivered), each then moved to its `status` at the same time, as a delivery
 * would. QUEUED and SCHEDULED stay as stored: SCHEDULED for a time ten days from now. Written straight into the
 * object in one call, so its alarm is left as it was.
 */
export async function seedEmails(
  accountId: string,
  emails: { status: EmailStatus; at: string }[],
): Promise<SeededEmail[]> {
  const stored = emails.map(({ status, at }) => ({ email: newEmail(accountId, status, at), status, at }));
  await Promise.all([
    storeBodies(
      env.BODIES,
      stored.map(({ email }) => email),
    ),
    ...stored.map(({ email }) => env.ATTACHMENTS.put(email.attachments[0]!.key, 'receipt')),
  ]);
  await inAccountObject(accountId, async (db) => {
    for (const { email, status, at } of stored) {
      await insertEmail(db, email);
      await finish(db, accountId, email.id, status, at);
    }
  });
  return stored.map(({ email }) => seeded(email));
}

/**
 * One email as `seedEmails` writes it. With `accepted`, it is stored through the object's operation as the API
 * would store it, so that the object plans its alarm as for any accepted email (the rest is written after).
 */
export async function seedEmail(
  accountId: string,
  status: EmailStatus,
  at: string,
  options: { accepted?: boolean } = {},
): Promise<SeededEmail> {
  if (!options.accepted) return (await seedEmails(accountId, [{ status, at }]))[0]!;
  const email = newEmail(accountId, status, at);
  await Promise.all([
    storedEmail(accountId, email.toAddresses, email),
    env.ATTACHMENTS.put(email.attachments[0]!.key, 'receipt'),
  ]);
  await inAccountObject(accountId, (db) => finish(db, accountId, email.id, status, at));
  return seeded(email);
}

/** How many rows of each kind an email has in its account's object, and whether its attachment and body are in R2. */
export async function rowsOfEmail(email: SeededEmail) {
  const rows = await inAccountObject(email.accountId, async (db) => {
    const count = (sql: string) =>
      db
        .prepare(sql)
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
    };
  });
  return {
    ...rows,
    objects: (await env.ATTACHMENTS.head(email.attachmentKey)) ? 1 : 0,
    bodies: (await env.BODIES.head(bodyKeyOf(email.id))) ? 1 : 0,
  };
}

/** One OTP verification (with its outcome) and one idempotency record at `at`. */
export async function seedHistory(accountId: string, at: string) {
  const sessionId = `otp_${crypto.randomUUID()}`;
  await inAccountObject(accountId, (db) =>
    db.batch([
      db
        .prepare(
          `INSERT INTO otp_verifications (id, account_id, channel, session_id, email, sent_at, verified_at)
           VALUES (?1, ?2, 'backend', ?3, ?4, ?5, ?5)`,
        )
        .bind(newId('ver'), accountId, sessionId, uniqueAddress('verified'), Date.parse(at)),
      db
        .prepare(
          `INSERT INTO otp_outcomes (session_id, account_id, channel, outcome, sent_at, ended_at)
           VALUES (?1, ?2, 'backend', 'verified', ?3, ?3)`,
        )
        .bind(sessionId, accountId, Date.parse(at)),
      db
        .prepare(
          `INSERT INTO idempotency_records (account_id, test, idem_key, request_hash, claim_id, response_status,
             response_body, created_at) VALUES (?1, 0, ?2, 'hash', 'req', 200, '{}', ?3)`,
        )
        .bind(accountId, crypto.randomUUID(), at),
    ]),
  );
}

/** The rows of an account per table (`emails` counts every status). */
export async function accountRows(accountId: string) {
  const row = await inAccountObject(accountId, (db) =>
    db
      .prepare(
        `SELECT (SELECT COUNT(*) FROM emails WHERE account_id = ?1) AS emails,
           (SELECT COUNT(*) FROM email_recipients r JOIN emails e ON e.id = r.email_id WHERE e.account_id = ?1)
             AS recipients,
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
      >(),
  );
  return row!;
}

/** Everything the metrics' counters of an account have counted. */
export async function countedOf(accountId: string): Promise<number> {
  const row = await inAccountObject(accountId, (db) =>
    db
      .prepare('SELECT COALESCE(SUM(n), 0) AS n FROM metric_counts WHERE account_id = ?')
      .bind(accountId)
      .first<{ n: number }>(),
  );
  return row!.n;
}
