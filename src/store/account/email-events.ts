// The timeline of an email (GET /api/v1/emails/{emailId} `events`), written in the transaction of the
// fact it records.

import type { EmailEvent, EmailEventType } from '../../mail/outcome';
import type { SqlStatement } from '../sql';
import { isoOf } from '../time';
import type { AccountSql } from './object-sql';

export type StoredEmailEvent = { type: EmailEventType; at: string; detail?: string; route?: string };

/**
 * The statement that appends `events` to an email's timeline when `condition` holds; the condition may
 * use ?1 (the email id) and ?2 (`owner`, e.g. a delivery lease).
 */
export function eventsInsert(
  db: AccountSql,
  emailId: string,
  events: EmailEvent[],
  at: number,
  condition = '1',
  owner: string | null = null,
): SqlStatement {
  return db
    .prepare(
      `INSERT INTO email_events (email_id, seq, type, at, detail, route)
       SELECT ?1, (SELECT COALESCE(MAX(seq), 0) FROM email_events WHERE email_id = ?1) + j.key + 1,
         json_extract(j.value, '$.type'), ?3, json_extract(j.value, '$.detail'), json_extract(j.value, '$.route')
       FROM json_each(?4) AS j WHERE ${condition} ORDER BY j.key`,
    )
    .bind(emailId, owner, at, JSON.stringify(events));
}

export async function listEmailEvents(db: AccountSql, emailId: string): Promise<StoredEmailEvent[]> {
  const rows = await db
    .prepare('SELECT type, at, detail, route FROM email_events WHERE email_id = ? ORDER BY seq')
    .bind(emailId)
    .all<{ type: EmailEventType; at: number; detail: string | null; route: string | null }>();
  return rows.results.map((r) => ({
    type: r.type,
    at: isoOf(r.at),
    ...(r.detail === null ? {} : { detail: r.detail }),
    ...(r.route === null ? {} : { route: r.route }),
  }));
}

/** Appends events to an email's timeline on their own (a fact that changes nothing else). */
export async function recordEmailEvents(db: AccountSql, emailId: string, events: EmailEvent[], at: number) {
  await eventsInsert(db, emailId, events, at).run();
}
