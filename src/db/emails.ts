import { nowIso } from '../ids';
import { canonicalAddress } from '../mail/address';
import type { EmailStatus } from '../mail/outcome';
import { emailQueuedEvent } from '../webhooks/produce';
import { eventsInsert } from './email-events';
import { deliveriesInsert, insertedIds } from './webhooks';

export type { EmailStatus };
export type Priority = 'URGENT' | 'NORMAL';

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
  created_at: string;
  updated_at: string;
  sent_at: string | null;
};

export const SELECT_EMAIL = `SELECT e.*, (
    SELECT json_group_array(address) FROM (SELECT address FROM email_recipients r WHERE r.email_id = e.id ORDER BY position)
  ) AS to_addresses FROM emails e`;

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
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  sentAt: row.sent_at,
});

/**
 * The daily warm-up allowance (route 1): an email counts its recipients on the UTC day it was
 * created. `reserve` adds them to the day's usage unless that would pass the allowance in the
 * settings (null = unlimited) and changes no row when it would; `release` gives them back.
 */
function dailyAllowance(db: D1Database, email: NewEmail) {
  const day = email.createdAt.slice(0, 10);
  const recipients = email.toAddresses.length;
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
 * Stores a QUEUED email and its recipients in one transaction (one round trip). The operator
 * settings are read inside it: a NORMAL email is stored held while the service is frozen, so an
 * unfreeze cannot slip in between. With `countTowardsAllowance` the day's recipients are reserved
 * first in the same transaction; when the allowance has no room, nothing is stored. Returns whether
 * the email was stored and whether it is held (RETURNING of the insert: no row when refused), and the
 * webhook deliveries of its `email.queued` event.
 */
export async function insertEmail(
  db: D1Database,
  email: NewEmail,
  options: AllowanceOption = {},
): Promise<{ stored: boolean; held: boolean; deliveryIds: string[] }> {
  const counted = options.countTowardsAllowance === true;
  const insertRow = db
    .prepare(
      `INSERT INTO emails (id, account_id, template_id, sender_id, from_email, from_name, subject, html, text,
         priority, status, message_id, created_at, updated_at, due_at, held)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'QUEUED', ?11, ?12, ?12, ?12,
         CASE WHEN ?10 = 'NORMAL' THEN COALESCE((SELECT frozen FROM settings WHERE id = 1), 0) ELSE 0 END
       WHERE ?13 = 0 OR changes() > 0
       RETURNING held`,
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
      counted ? 1 : 0, // ?13: the insert follows the reservation, and runs only if it changed a row
    );
  const insertRecipients = db
    .prepare(
      `INSERT INTO email_recipients (email_id, position, address, canonical)
       SELECT ?1, key, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?2)
       WHERE EXISTS (SELECT 1 FROM emails WHERE id = ?1)`,
    )
    .bind(email.id, JSON.stringify(email.toAddresses.map((address) => [address, canonicalAddress(address)])));
  const events = [
    eventsInsert(
      db,
      email.id,
      [{ type: 'queued', detail: null }],
      email.createdAt,
      'EXISTS (SELECT 1 FROM emails WHERE id = ?1)',
    ),
    eventsInsert(
      db,
      email.id,
      [{ type: 'held', detail: null }],
      email.createdAt,
      'EXISTS (SELECT 1 FROM emails WHERE id = ?1 AND held = 1)',
    ),
  ];
  const webhooks = deliveriesInsert(
    db,
    email.accountId,
    [emailQueuedEvent(email)],
    email.createdAt,
    'EXISTS (SELECT 1 FROM emails WHERE id = ?4)',
    [email.id],
  );
  const reserve = counted ? [dailyAllowance(db, email).reserve] : [];
  const results = await db.batch([...reserve, insertRow, insertRecipients, ...events, webhooks]);
  const row = results[reserve.length]!.results[0] as { held: number } | undefined;
  return { stored: row !== undefined, held: row?.held === 1, deliveryIds: insertedIds(results.at(-1)) };
}

/**
 * Undoes `insertEmail` (with the same options) when the email's queue message could not be
 * produced: the row, its recipients and the allowance it reserved go in one transaction.
 */
export async function unstoreEmail(
  db: D1Database,
  email: NewEmail,
  options: AllowanceOption & { deliveryIds?: string[] } = {},
): Promise<void> {
  await db.batch([
    db
      .prepare('DELETE FROM webhook_deliveries WHERE id IN (SELECT value FROM json_each(?))')
      .bind(JSON.stringify(options.deliveryIds ?? [])),
    db.prepare('DELETE FROM email_recipients WHERE email_id = ?').bind(email.id),
    db.prepare('DELETE FROM email_events WHERE email_id = ?').bind(email.id),
    db.prepare('DELETE FROM emails WHERE id = ?').bind(email.id),
    ...(options.countTowardsAllowance === true ? [dailyAllowance(db, email).release] : []),
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
