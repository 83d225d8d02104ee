import type { AttachmentMeta } from '../../mail/attachments';
import type { EmailStatus } from '../../mail/outcome';
import { isoOf, isoOrNull } from '../time';
import { eventsInsert } from './email-events';
import type { AccountSql } from './object-sql';

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

/** An email being accepted: its body (html, text) goes to R2 before its row is stored (src/mail/bodies.ts). */
export type NewEmail = Omit<EmailRecord, 'status' | 'attempts' | 'lastReply' | 'updatedAt' | 'sentAt'> & {
  html: string | null;
  text: string | null;
};

export type EmailRow = {
  id: string;
  account_id: string;
  template_id: string | null;
  sender_id: string | null;
  from_email: string;
  from_name: string | null;
  subject: string;
  priority: Priority;
  status: EmailStatus;
  attempts: number;
  last_reply: string | null;
  to_addresses: string;
  cc_addresses: string;
  bcc_addresses: string;
  reply_to: string;
  headers: string;
  tags: string;
  attachments: string;
  scheduled_at: number | null;
  test: number;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
};

const addressesOf = (kind: 'to' | 'cc' | 'bcc') => `(
    SELECT json_group_array(address) FROM (
      SELECT address FROM email_recipients r WHERE r.email_id = e.id AND r.kind = '${kind}' ORDER BY position)
  ) AS ${kind}_addresses`;

export const SELECT_EMAIL = `SELECT e.*, ${addressesOf('to')}, ${addressesOf('cc')}, ${addressesOf('bcc')}, (
    SELECT json_group_array(json_object('filename', filename, 'contentType', content_type, 'contentId', content_id,
      'size', size, 'key', r2_key)) FROM (SELECT * FROM email_attachments a WHERE a.email_id = e.id ORDER BY position)
  ) AS attachments FROM emails e`;

/** An email's Message-ID: its id at the sender's domain. */
/**
 * The email's status from its recipients' rows (`?1` the email id), as `emailStatusOf` in src/mail/outcome.ts
 * decides it: the statements that change a recipient after a send use it in the same transaction.
 */
export const EMAIL_STATUS_SQL = `(SELECT CASE
    WHEN SUM(status = 'QUEUED') > 0 THEN 'QUEUED'
    WHEN SUM(status IN ('DELIVERED', 'COMPLAINED')) = COUNT(*) THEN 'DELIVERED'
    WHEN SUM(status IN ('BOUNCED', 'FAILED')) = COUNT(*) AND SUM(status = 'BOUNCED') > 0 THEN 'BOUNCED'
    WHEN SUM(status IN ('SENT', 'DELIVERED', 'BOUNCED', 'COMPLAINED')) > 0 THEN 'SENT'
    WHEN SUM(status = 'SUPPRESSED') = COUNT(*) THEN 'SUPPRESSED'
    ELSE 'FAILED' END FROM email_recipients WHERE email_id = ?1)`;

export const messageIdOf = (id: string, fromEmail: string) => `<${id}@${fromEmail.split('@').pop()}>`;

/** The email a Message-ID of ours names (its inverse), or null for anyone else's. */
export const emailIdOfMessageId = (messageId: string | null | undefined): string | null =>
  /^<(em_[a-z2-7]{20})@[^>]+>$/.exec(messageId ?? '')?.[1] ?? null;

export const toEmail = (row: EmailRow): EmailRecord => ({
  id: row.id,
  accountId: row.account_id,
  templateId: row.template_id,
  senderId: row.sender_id,
  fromEmail: row.from_email,
  fromName: row.from_name,
  subject: row.subject,
  priority: row.priority,
  status: row.status,
  // One Message-ID for the life of the email (src/mail/compose.ts), so a retried duplicate can be recognised.
  messageId: messageIdOf(row.id, row.from_email),
  attempts: row.attempts,
  lastReply: row.last_reply,
  toAddresses: JSON.parse(row.to_addresses) as string[],
  ccAddresses: JSON.parse(row.cc_addresses) as string[],
  bccAddresses: JSON.parse(row.bcc_addresses) as string[],
  replyTo: JSON.parse(row.reply_to) as string[],
  headers: JSON.parse(row.headers) as Record<string, string>,
  tags: JSON.parse(row.tags) as EmailTag[],
  attachments: JSON.parse(row.attachments) as AttachmentMeta[],
  scheduledAt: isoOrNull(row.scheduled_at),
  test: row.test === 1,
  createdAt: isoOf(row.created_at),
  updatedAt: isoOf(row.updated_at),
  sentAt: isoOrNull(row.sent_at),
});

/** Every recipient of an email with its kind, in order: to, then cc, then bcc. */
export const recipientsOf = (email: Pick<NewEmail, 'toAddresses' | 'ccAddresses' | 'bccAddresses'>) => [
  ...email.toAddresses.map((address) => ({ address, kind: 'to' as const })),
  ...email.ccAddresses.map((address) => ({ address, kind: 'cc' as const })),
  ...email.bccAddresses.map((address) => ({ address, kind: 'bcc' as const })),
];

export async function findEmail(db: AccountSql, id: string): Promise<EmailRecord | null> {
  const row = await db.prepare(`${SELECT_EMAIL} WHERE e.id = ?`).bind(id).first<EmailRow>();
  return row ? toEmail(row) : null;
}

/** Emails held by freeze mode, oldest first (the release queues them). */
export async function listHeldEmailIds(db: AccountSql, limit: number): Promise<string[]> {
  const rows = await db
    .prepare(
      `SELECT id FROM emails INDEXED BY emails_held WHERE held = 1 AND status = 'QUEUED' ORDER BY created_at, id LIMIT ?`,
    )
    .bind(limit)
    .all<{ id: string }>();
  return rows.results.map((r) => r.id);
}

/** Released from freeze mode: due now, with a `released` event. */
export async function clearHeld(db: AccountSql, ids: string[]): Promise<void> {
  const at = Date.now();
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
