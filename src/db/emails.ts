import { nowIso } from '../ids';

export type EmailStatus = 'QUEUED' | 'SENT' | 'FAILED';
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

type EmailRow = {
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

const SELECT_EMAIL = `SELECT e.*, (
    SELECT json_group_array(address) FROM (SELECT address FROM email_recipients r WHERE r.email_id = e.id ORDER BY position)
  ) AS to_addresses FROM emails e`;

const toEmail = (row: EmailRow): EmailRecord => ({
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
 * Stores a QUEUED email and its recipients in one transaction (one round trip). The operator
 * settings are read inside it: a NORMAL email is stored held while the service is frozen. An
 * optional `gate` statement runs first (the daily-allowance reservation); when it changes no row,
 * nothing is stored. Returns whether the email was stored and whether it is held (RETURNING of the
 * insert: no row when the gate refused).
 */
export async function insertEmail(
  db: D1Database,
  email: NewEmail,
  options: { gate?: D1PreparedStatement } = {},
): Promise<{ stored: boolean; held: boolean }> {
  const insertRow = db
    .prepare(
      `INSERT INTO emails (id, account_id, template_id, sender_id, from_email, from_name, subject, html, text,
         priority, status, message_id, created_at, updated_at, held)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'QUEUED', ?11, ?12, ?12,
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
      options.gate ? 1 : 0,
    );
  const insertRecipients = db
    .prepare(
      `INSERT INTO email_recipients (email_id, position, address)
       SELECT ?1, key, value FROM json_each(?2) WHERE EXISTS (SELECT 1 FROM emails WHERE id = ?1)`,
    )
    .bind(email.id, JSON.stringify(email.toAddresses));
  const results = await db.batch([...(options.gate ? [options.gate] : []), insertRow, insertRecipients]);
  const row = results.at(-2)!.results[0] as { held: number } | undefined;
  return { stored: row !== undefined, held: row?.held === 1 };
}

/** Used only to undo an insert whose queue message could not be produced. */
export async function deleteEmail(db: D1Database, id: string): Promise<void> {
  await db.batch([
    db.prepare('DELETE FROM email_recipients WHERE email_id = ?').bind(id),
    db.prepare('DELETE FROM emails WHERE id = ?').bind(id),
  ]);
}

export async function findEmail(db: D1Database, id: string): Promise<EmailRecord | null> {
  const row = await db.prepare(`${SELECT_EMAIL} WHERE e.id = ?`).bind(id).first<EmailRow>();
  return row ? toEmail(row) : null;
}

export async function listEmails(db: D1Database, accountId: string, page: number, limit: number) {
  const [rows, count] = await db.batch([
    db
      .prepare(`${SELECT_EMAIL} WHERE e.account_id = ? ORDER BY e.created_at DESC, e.id DESC LIMIT ? OFFSET ?`)
      .bind(accountId, limit, (page - 1) * limit),
    db.prepare('SELECT COUNT(*) AS total FROM emails WHERE account_id = ?').bind(accountId),
  ]);
  return {
    emails: (rows!.results as EmailRow[]).map(toEmail),
    total: (count!.results[0] as { total: number }).total,
  };
}

export type DeliveryOutcome = { id: string; status: EmailStatus; reply: string | null };

/**
 * Records delivery attempts, one transaction for a whole batch. Only a QUEUED row changes, so a
 * late or duplicate outcome can never turn SENT back into FAILED or the other way round; QUEUED
 * (a transient failure) keeps the row queued with its reply and frees the lease.
 */
export async function recordDeliveryOutcomes(db: D1Database, outcomes: DeliveryOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const now = nowIso();
  const statement = db.prepare(
    `UPDATE emails SET status = ?1, last_reply = ?2, attempts = attempts + 1, updated_at = ?3,
       lease_until = NULL, lease_owner = NULL, sent_at = CASE WHEN ?1 = 'SENT' THEN ?3 ELSE sent_at END
     WHERE id = ?4 AND status = 'QUEUED'`,
  );
  await db.batch(outcomes.map((o) => statement.bind(o.status, o.reply, now, o.id)));
}

/** Dead-lettered: retries are exhausted. The last transient reply stays on the row. */
export async function markUndeliverable(db: D1Database, id: string): Promise<void> {
  await db
    .prepare(
      `UPDATE emails SET status = 'FAILED', updated_at = ?,
         last_reply = COALESCE(last_reply, 'retries exhausted') WHERE id = ? AND status = 'QUEUED'`,
    )
    .bind(nowIso(), id)
    .run();
}

export type DeliveryClaim =
  | { kind: 'claimed'; email: EmailRecord }
  | { kind: 'done' } // unknown, SENT or FAILED: nothing to do
  | { kind: 'held' } // held for freeze mode: it is queued again on release
  | { kind: 'busy'; retryInSeconds: number }; // another consumer holds the lease

/**
 * Takes the delivery lease of QUEUED emails, so that two deliveries of the same queue message
 * (queues deliver at least once) cannot both send one. One round trip for the whole batch: the
 * update and the read run in one transaction.
 */
export async function claimForDelivery(db: D1Database, ids: string[], leaseSeconds: number): Promise<Map<string, DeliveryClaim>> {
  const now = new Date();
  const owner = crypto.randomUUID();
  const idList = JSON.stringify(ids);
  const [, selected] = await db.batch([
    db
      .prepare(
        `UPDATE emails SET lease_until = ?1, lease_owner = ?4
         WHERE id IN (SELECT value FROM json_each(?2)) AND status = 'QUEUED' AND held = 0
           AND (lease_until IS NULL OR lease_until < ?3)`,
      )
      .bind(nowIso(new Date(now.getTime() + leaseSeconds * 1000)), idList, nowIso(now), owner),
    db.prepare(`${SELECT_EMAIL} WHERE e.id IN (SELECT value FROM json_each(?))`).bind(idList),
  ]);
  type ClaimRow = EmailRow & { held: number; lease_until: string; lease_owner: string };
  const rows = new Map((selected!.results as ClaimRow[]).map((row) => [row.id, row]));
  const claims = new Map<string, DeliveryClaim>();
  for (const id of ids) {
    const row = rows.get(id);
    if (!row || row.status !== 'QUEUED') claims.set(id, { kind: 'done' });
    else if (row.held === 1) claims.set(id, { kind: 'held' });
    else if (row.lease_owner === owner) claims.set(id, { kind: 'claimed', email: toEmail(row) });
    else {
      const retryInSeconds = Math.max(Math.ceil((Date.parse(row.lease_until) - now.getTime()) / 1000), 1);
      claims.set(id, { kind: 'busy', retryInSeconds });
    }
  }
  return claims;
}

/** Freeze mode: park a NORMAL email until release. */
export async function holdEmail(db: D1Database, id: string): Promise<void> {
  await db
    .prepare(`UPDATE emails SET held = 1, lease_until = NULL, lease_owner = NULL, updated_at = ? WHERE id = ? AND status = 'QUEUED'`)
    .bind(nowIso(), id)
    .run();
}

export async function listHeldEmailIds(db: D1Database, limit: number): Promise<string[]> {
  const rows = await db
    .prepare(`SELECT id FROM emails WHERE held = 1 AND status = 'QUEUED' ORDER BY created_at, id LIMIT ?`)
    .bind(limit)
    .all<{ id: string }>();
  return rows.results.map((r) => r.id);
}

export async function clearHeld(db: D1Database, ids: string[]): Promise<void> {
  await db.batch(ids.map((id) => db.prepare('UPDATE emails SET held = 0 WHERE id = ?').bind(id)));
}
