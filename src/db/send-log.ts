// The send log as an account reads it: pages with filters, and one email whole.
import { canonicalAddress } from '../mail/address';
import { listEmailEvents } from './email-events';
import { type EmailRow, type EmailStatus, SELECT_EMAIL, toEmail } from './emails';

export type SendLogFilter = { status?: EmailStatus; to?: string };

/** One page of the send log, newest first; `to` matches any spelling of the mailbox (canonical form). */
export async function listEmails(
  db: D1Database,
  accountId: string,
  page: number,
  limit: number,
  filter: SendLogFilter = {},
) {
  const where = `WHERE e.account_id = ?1 AND (?2 IS NULL OR e.status = ?2)
    AND (?3 IS NULL OR EXISTS (SELECT 1 FROM email_recipients f WHERE f.canonical = ?3 AND f.email_id = e.id))`;
  const to = filter.to === undefined ? null : canonicalAddress(filter.to);
  const [rows, count] = await db.batch([
    db
      .prepare(`${SELECT_EMAIL} ${where} ORDER BY e.created_at DESC, e.id DESC LIMIT ?4 OFFSET ?5`)
      .bind(accountId, filter.status ?? null, to, limit, (page - 1) * limit),
    db.prepare(`SELECT COUNT(*) AS total FROM emails e ${where}`).bind(accountId, filter.status ?? null, to),
  ]);
  return {
    emails: (rows!.results as EmailRow[]).map(toEmail),
    total: (count!.results[0] as { total: number }).total,
  };
}

export type RecipientOutcome = { email: string; status: EmailStatus; reply?: string };

/** One email of an account with its recipients' outcomes and its timeline; null when not the account's. */
export async function findEmailDetail(db: D1Database, accountId: string, id: string) {
  const [email, recipients] = await db.batch([
    db.prepare(`${SELECT_EMAIL} WHERE e.id = ?1 AND e.account_id = ?2`).bind(id, accountId),
    db
      .prepare(
        `SELECT r.address, r.status, r.reply FROM email_recipients r JOIN emails e ON e.id = r.email_id
         WHERE r.email_id = ?1 AND e.account_id = ?2 ORDER BY r.position`,
      )
      .bind(id, accountId),
  ]);
  const row = email!.results[0] as EmailRow | undefined;
  if (!row) return null;
  type Row = { address: string; status: EmailStatus; reply: string | null };
  const outcomes = (recipients!.results as Row[]).map(
    (r): RecipientOutcome =>
      r.reply === null
        ? { email: r.address, status: r.status }
        : { email: r.address, status: r.status, reply: r.reply },
  );
  return { email: toEmail(row), recipients: outcomes, events: await listEmailEvents(db, id) };
}
