// Bodies of emails just accepted: kept in the account's object in the transaction that accepts them, so that
// queueing waits for nothing outside the account's region, and moved to R2 by the object's alarm after the answer.
// Until then the consumer and the detail read them here.
import type { AccountSql } from './object-sql';

/** An email's html and text. */
export type EmailBody = { html: string | null; text: string | null };

type BodyRow = { email_id: string; body: string };

/** Keeps the bodies of emails the same transaction stores. */
export async function keepBodies(db: AccountSql, emails: (EmailBody & { id: string })[]): Promise<void> {
  const rows = emails.map((e) => [e.id, JSON.stringify({ html: e.html, text: e.text })]);
  await db
    .prepare(
      `INSERT OR REPLACE INTO email_bodies (email_id, body)
       SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)`,
    )
    .bind(JSON.stringify(rows))
    .run();
}

/** Up to `limit` bodies still here, to move to R2. */
export async function bodiesToMove(db: AccountSql, limit: number): Promise<{ emailId: string; body: string }[]> {
  const { results } = await db
    .prepare("SELECT email_id, body FROM email_bodies WHERE email_id > '' ORDER BY email_id LIMIT ?")
    .bind(limit)
    .all<BodyRow>();
  return results.map((r) => ({ emailId: r.email_id, body: r.body }));
}

/** The bodies R2 has now. */
export async function forgetBodies(db: AccountSql, emailIds: string[]): Promise<void> {
  await db
    .prepare('DELETE FROM email_bodies WHERE email_id IN (SELECT value FROM json_each(?))')
    .bind(JSON.stringify(emailIds))
    .run();
}

/** The bodies of these emails that are still here (not yet in R2). */
export async function bodiesHere(db: AccountSql, emailIds: string[]): Promise<Record<string, EmailBody>> {
  const { results } = await db
    .prepare('SELECT email_id, body FROM email_bodies WHERE email_id IN (SELECT value FROM json_each(?))')
    .bind(JSON.stringify(emailIds))
    .all<BodyRow>();
  return Object.fromEntries(results.map((r) => [r.email_id, JSON.parse(r.body) as EmailBody]));
}
