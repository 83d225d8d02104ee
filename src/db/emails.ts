import { nowIso } from '../ids';
import { canonicalAddress } from '../mail/address';
import type { AttachmentMeta } from '../mail/attachments';
import type { EmailStatus } from '../mail/outcome';
import { emailQueuedEvent } from '../webhooks/produce';
import { eventsInsert } from './email-events';
import { deliveriesInsert, insertedIds } from './webhooks';

export type { EmailStatus };
export type Priority = 'URGENT' | 'NORMAL';

export type EmailTag = { name: string; value: string };

export type EmailRecord = {
  id: string;
  accountId: string;
  templateId: string | null;
  senderId: string | null;
  fromEmail: string;
  fromName: string | null;
  subject: string;
  html: string | null;
  text: string | null;
  priority: Priority;
  status: EmailStatus;
  messageId: string;
  attempts: number;
  lastReply: string | null;
  toAddresses: string[];
  ccAddresses: string[];
  bccAddresses: string[];
  replyTo: string[];
  headers: Record<string, string>;
  tags: EmailTag[];
  attachments: AttachmentMeta[];
  /** When a SCHEDULED email is (or was) due; null when it was sent at once. */
  scheduledAt: string | null;
  /** Queued with a test key: runs the whole pipeline but never opens SMTP. */
  test: boolean;
  createdAt: string;
  updatedAt: string;
  sentAt: string | null;
};

export type NewEmail = Omit<EmailRecord, 'status' | 'attempts' | 'lastReply' | 'updatedAt' | 'sentAt'>;

export type EmailRow = {
  id: string;
  account_id: string;
  template_id: string | null;
  sender_id: string | null;
  from_email: string;
  from_name: string | null;
  subject: string;
  html: string | null;
  text: string | null;
  priority: Priority;
  status: EmailStatus;
  message_id: string;
  attempts: number;
  last_reply: string | null;
  to_addresses: string;
  cc_addresses: string;
  bcc_addresses: string;
  reply_to: string;
  headers: string;
  tags: string;
  attachments: string;
  scheduled_at: string | null;
  test: number;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
};

const addressesOf = (kind: 'to' | 'cc' | 'bcc') => `(
    SELECT json_group_array(address) FROM (
      SELECT address FROM email_recipients r WHERE r.email_id = e.id AND r.kind = '${kind}' ORDER BY position)
  ) AS ${kind}_addresses`;

export const SELECT_EMAIL = `SELECT e.*, ${addressesOf('to')}, ${addressesOf('cc')}, ${addressesOf('bcc')}, (
    SELECT json_group_array(json_object('filename', filename, 'contentType', content_type, 'contentId', content_id,
      'size', size, 'key', r2_key)) FROM (SELECT * FROM email_attachments a WHERE a.email_id = e.id ORDER BY position)
  ) AS attachments FROM emails e`;

export const toEmail = (row: EmailRow): EmailRecord => ({
  id: row.id,
  accountId: row.account_id,
  templateId: row.template_id,
  senderId: row.sender_id,
  fromEmail: row.from_email,
  fromName: row.from_name,
  subject: row.subject,
  html: row.html,
  text: row.text,
  priority: row.priority,
  status: row.status,
  messageId: row.message_id,
  attempts: row.attempts,
  lastReply: row.last_reply,
  toAddresses: JSON.parse(row.to_addresses) as string[],
  ccAddresses: JSON.parse(row.cc_addresses) as string[],
  bccAddresses: JSON.parse(row.bcc_addresses) as string[],
  replyTo: JSON.parse(row.reply_to) as string[],
  headers: JSON.parse(row.headers) as Record<string, string>,
  tags: JSON.parse(row.tags) as EmailTag[],
  attachments: JSON.parse(row.attachments) as AttachmentMeta[],
  scheduledAt: row.scheduled_at,
  test: row.test === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  sentAt: row.sent_at,
});

/** Every recipient of an email with its kind, in order: to, then cc, then bcc. */
export const recipientsOf = (email: Pick<NewEmail, 'toAddresses' | 'ccAddresses' | 'bccAddresses'>) => [
  ...email.toAddresses.map((address) => ({ address, kind: 'to' as const })),
  ...email.ccAddresses.map((address) => ({ address, kind: 'cc' as const })),
  ...email.bccAddresses.map((address) => ({ address, kind: 'bcc' as const })),
];

/**
 * The daily warm-up allowance (route 1 and the batch): emails count their recipients on the UTC day they
 * were created. `reserve` adds them to the day's usage unless that would pass the allowance in the settings
 * (null = unlimited) and changes no row when it would; `release` gives them back.
 */
function dailyAllowance(db: D1Database, emails: NewEmail[]) {
  const day = emails[0]!.createdAt.slice(0, 10);
  const recipients = emails.reduce((sum, email) => sum + recipientsOf(email).length, 0);
  return {
    reserve: db
      .prepare(
        `INSERT INTO daily_usage (day, recipients)
         SELECT ?1, ?2 WHERE ?2 <= COALESCE((SELECT daily_allowance FROM settings WHERE id = 1), ?3)
         ON CONFLICT(day) DO UPDATE SET recipients = recipients + ?2
         WHERE recipients + ?2 <= COALESCE((SELECT daily_allowance FROM settings WHERE id = 1), ?3)`,
      )
      .bind(day, recipients, Number.MAX_SAFE_INTEGER),
    release: db
      .prepare('UPDATE daily_usage SET recipients = MAX(recipients - ?, 0) WHERE day = ?')
      .bind(recipients, day),
  };
}

export type AllowanceOption = { countTowardsAllowance?: boolean };

/**
 * The statements that store one email: its row (QUEUED, or SCHEDULED with `scheduledAt`), recipients,
 * tags, attachment metadata and first events. `gate` decides whether anything is stored: the reservation
 * just before (`changes()`), or the first email of the same batch having been stored.
 */
function emailStatements(db: D1Database, email: NewEmail, gate: { counted: boolean; anchorId: string | null }) {
  const exists = 'EXISTS (SELECT 1 FROM emails WHERE id = ?1)';
  const insertRow = db
    .prepare(
      `INSERT INTO emails (id, account_id, template_id, sender_id, from_email, from_name, subject, html, text,
         priority, status, message_id, created_at, updated_at, due_at, held, scheduled_at, reply_to, headers, tags, test)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, CASE WHEN ?15 IS NULL THEN 'QUEUED' ELSE 'SCHEDULED' END,
         ?11, ?12, ?12, COALESCE(?15, ?12),
         CASE WHEN ?10 = 'NORMAL' AND ?15 IS NULL THEN COALESCE((SELECT frozen FROM settings WHERE id = 1), 0) ELSE 0 END,
         ?15, ?16, ?17, ?18, ?19
       WHERE CASE WHEN ?14 IS NULL THEN (?13 = 0 OR changes() > 0) ELSE EXISTS (SELECT 1 FROM emails WHERE id = ?14) END
       RETURNING id, held`,
    )
    .bind(
      email.id,
      email.accountId,
      email.templateId,
      email.senderId,
      email.fromEmail,
      email.fromName,
      email.subject,
      email.html,
      email.text,
      email.priority,
      email.messageId,
      email.createdAt,
      gate.counted ? 1 : 0, // ?13: the insert follows the reservation, and runs only if it changed a row
      gate.anchorId, // ?14: in a batch, stored only if the batch's first email was
      email.scheduledAt,
      JSON.stringify(email.replyTo),
      JSON.stringify(email.headers),
      JSON.stringify(email.tags),
      email.test ? 1 : 0,
    );
  const recipients = recipientsOf(email).map(({ address, kind }) => [address, canonicalAddress(address), kind]);
  const statements = [
    insertRow,
    db
      .prepare(
        `INSERT INTO email_recipients (email_id, position, address, canonical, kind)
         SELECT ?1, key, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]')
         FROM json_each(?2) WHERE ${exists}`,
      )
      .bind(email.id, JSON.stringify(recipients)),
    eventsInsert(
      db,
      email.id,
      [
        email.scheduledAt ? { type: 'scheduled', detail: email.scheduledAt } : { type: 'queued', detail: null },
        { type: 'held', detail: null },
      ],
      email.createdAt,
      `${exists} AND (json_extract(j.value, '$.type') <> 'held' OR EXISTS (SELECT 1 FROM emails WHERE id = ?1 AND held = 1))`,
    ),
  ];
  if (email.tags.length > 0) {
    statements.push(
      db
        .prepare(
          `INSERT INTO email_tags (email_id, name, value)
           SELECT ?1, json_extract(value, '$.name'), json_extract(value, '$.value') FROM json_each(?2) WHERE ${exists}`,
        )
        .bind(email.id, JSON.stringify(email.tags)),
    );
  }
  if (email.attachments.length > 0) {
    statements.push(
      db
        .prepare(
          `INSERT INTO email_attachments (email_id, position, filename, content_type, content_id, size, r2_key)
           SELECT ?1, key, json_extract(value, '$.filename'), json_extract(value, '$.contentType'),
             json_extract(value, '$.contentId'), json_extract(value, '$.size'), json_extract(value, '$.key')
           FROM json_each(?2) WHERE ${exists}`,
        )
        .bind(email.id, JSON.stringify(email.attachments)),
    );
  }
  return statements;
}

export type StoredEmails = {
  /** False when the daily allowance refused them (nothing was stored). */
  stored: boolean;
  /** The ids stored held by freeze mode (they get no queue message until release). */
  held: Set<string>;
  /** The webhook deliveries of their `email.queued` events. */
  deliveryIds: string[];
};

/**
 * Stores QUEUED (or SCHEDULED) emails and everything of theirs in one transaction (one round trip): all
 * or none. The operator settings are read inside it: a NORMAL email due now is stored held while the
 * service is frozen, so an unfreeze cannot slip in between. With `countTowardsAllowance` the recipients of
 * every email are reserved first in the same transaction; when the allowance has no room, nothing is stored.
 */
export async function insertEmails(
  db: D1Database,
  emails: NewEmail[],
  options: AllowanceOption = {},
): Promise<StoredEmails> {
  const counted = options.countTowardsAllowance === true;
  const first = emails[0]!;
  const perEmail = emails.map((email, index) =>
    emailStatements(db, email, { counted, anchorId: index === 0 ? null : first.id }),
  );
  const webhooks = deliveriesInsert(
    db,
    first.accountId,
    emails.map(emailQueuedEvent),
    first.createdAt,
    'EXISTS (SELECT 1 FROM emails WHERE id = ?4)',
    [first.id],
  );
  const reserve = counted ? [dailyAllowance(db, emails).reserve] : [];
  const results = await db.batch([...reserve, ...perEmail.flat(), webhooks]);
  const held = new Set<string>();
  let stored = false;
  let offset = reserve.length;
  for (const statements of perEmail) {
    const row = results[offset]!.results[0] as { id: string; held: number } | undefined;
    if (row) stored = true;
    if (row?.held === 1) held.add(row.id);
    offset += statements.length;
  }
  return { stored, held, deliveryIds: insertedIds(results.at(-1)) };
}

/** One email: see `insertEmails`. */
export async function insertEmail(db: D1Database, email: NewEmail, options: AllowanceOption = {}) {
  const { stored, held, deliveryIds } = await insertEmails(db, [email], options);
  return { stored, held: held.has(email.id), deliveryIds };
}

/**
 * Undoes `insertEmails` (with the same options) when the emails' queue messages could not be produced:
 * the rows, everything of theirs and the allowance they reserved go in one transaction.
 */
export async function unstoreEmails(
  db: D1Database,
  emails: NewEmail[],
  options: AllowanceOption & { deliveryIds?: string[] } = {},
): Promise<void> {
  const ids = JSON.stringify(emails.map((email) => email.id));
  const inIds = 'email_id IN (SELECT value FROM json_each(?))';
  await db.batch([
    db
      .prepare('DELETE FROM webhook_deliveries WHERE id IN (SELECT value FROM json_each(?))')
      .bind(JSON.stringify(options.deliveryIds ?? [])),
    ...['email_recipients', 'email_events', 'email_tags', 'email_attachments'].map((table) =>
      db.prepare(`DELETE FROM ${table} WHERE ${inIds}`).bind(ids),
    ),
    db.prepare('DELETE FROM emails WHERE id IN (SELECT value FROM json_each(?))').bind(ids),
    ...(options.countTowardsAllowance === true ? [dailyAllowance(db, emails).release] : []),
  ]);
}

export async function findEmail(db: D1Database, id: string): Promise<EmailRecord | null> {
  const row = await db.prepare(`${SELECT_EMAIL} WHERE e.id = ?`).bind(id).first<EmailRow>();
  return row ? toEmail(row) : null;
}

/** Emails held by freeze mode, oldest first (the release queues them). */
export async function listHeldEmailIds(db: D1Database, limit: number): Promise<string[]> {
  const rows = await db
    .prepare(`SELECT id FROM emails WHERE held = 1 AND status = 'QUEUED' ORDER BY created_at, id LIMIT ?`)
    .bind(limit)
    .all<{ id: string }>();
  return rows.results.map((r) => r.id);
}

/** Released from freeze mode: due now, with a `released` event. */
export async function clearHeld(db: D1Database, ids: string[]): Promise<void> {
  const at = nowIso();
  await db.batch(
    ids.flatMap((id) => [
      eventsInsert(
        db,
        id,
        [{ type: 'released', detail: null }],
        at,
        'EXISTS (SELECT 1 FROM emails WHERE id = ?1 AND held = 1)',
      ),
      db.prepare('UPDATE emails SET held = 0, due_at = ? WHERE id = ?').bind(at, id),
    ]),
  );
}
