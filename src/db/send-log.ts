// The send log as an account reads it: pages with filters, and one email whole.
import { canonicalAddress } from '../mail/address';
import type { RecipientStatus } from '../mail/outcome';
import { listEmailEvents } from './email-events';
import { type EmailRow, type EmailStatus, SELECT_EMAIL, toEmail } from './emails';
import type { D1Reader } from './reads';
import type { EmailOwner } from './schedule';

/** `tag` is `name:value`. */
export type SendLogFilter = { status?: EmailStatus; to?: string; tag?: string };

/**
 * One page of the send log, newest first; `to` matches any spelling of the mailbox (canonical form).
 * A test key reads only test-key mail, a live key only live mail.
 */
export async function listEmails(
  db: D1Reader,
  owner: EmailOwner,
  page: number,
  limit: number,
  filter: SendLogFilter = {},
) {
  const where = `WHERE e.account_id = ?1 AND e.test = ?6 AND (?2 IS NULL OR e.status = ?2)
    AND (?3 IS NULL OR EXISTS (SELECT 1 FROM email_recipients f WHERE f.canonical = ?3 AND f.email_id = e.id))
    AND (?7 IS NULL OR EXISTS (SELECT 1 FROM email_tags t WHERE t.name = ?7 AND t.value = ?8 AND t.email_id = e.id))`;
  const to = filter.to === undefined ? null : canonicalAddress(filter.to);
  const [tagName, tagValue] = filter.tag ? filter.tag.split(':') : [null, null];
  const params = [owner.accountId, filter.status ?? null, to, limit, (page - 1) * limit, owner.test ? 1 : 0];
  const [rows, count] = await db.batch([
    db
      .prepare(`${SELECT_EMAIL} ${where} ORDER BY e.created_at DESC, e.id DESC LIMIT ?4 OFFSET ?5`)
      .bind(...params, tagName ?? null, tagValue ?? null),
    // ?4 and ?5 (the page) are bound but unused here: SQLite numbers parameters by their highest index.
    db.prepare(`SELECT COUNT(*) AS total FROM emails e ${where}`).bind(...params, tagName ?? null, tagValue ?? null),
  ]);
  return {
    emails: (rows!.results as EmailRow[]).map(toEmail),
    total: (count!.results[0] as { total: number }).total,
  };
}

type Kind = 'to' | 'cc' | 'bcc';
export type RecipientOutcome = { email: string; kind: Kind; status: RecipientStatus; reply?: string };

/** One email of the owner with its recipients' outcomes and its timeline; null when not the owner's. */
export async function findEmailDetail(db: D1Reader, owner: EmailOwner, id: string) {
  const test = owner.test ? 1 : 0;
  const [email, recipients] = await db.batch([
    db.prepare(`${SELECT_EMAIL} WHERE e.id = ?1 AND e.account_id = ?2 AND e.test = ?3`).bind(id, owner.accountId, test),
    db
      .prepare(
        `SELECT r.address, r.kind, r.status, r.reply FROM email_recipients r JOIN emails e ON e.id = r.email_id
         WHERE r.email_id = ?1 AND e.account_id = ?2 AND e.test = ?3 ORDER BY r.position`,
      )
      .bind(id, owner.accountId, test),
  ]);
  const row = email!.results[0] as EmailRow | undefined;
  if (!row) return null;
  type Row = { address: string; kind: Kind; status: RecipientStatus; reply: string | null };
  const outcomes = (recipients!.results as Row[]).map(
    (r): RecipientOutcome => ({
      email: r.address,
      kind: r.kind,
      status: r.status,
      ...(r.reply === null ? {} : { reply: r.reply }),
    }),
  );
  return { email: toEmail(row), recipients: outcomes, events: await listEmailEvents(db, id) };
}
