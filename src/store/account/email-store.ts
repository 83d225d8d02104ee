// Storing accepted emails: everything of theirs in one transaction, all or none (a batch too), with the
// daily allowance reserved in it.

import { canonicalAddress } from '../../mail/address';
import { emailQueuedEvent } from '../../webhooks/produce';
import { msOf } from '../time';
import { type EmailBody, keepBodies } from './bodies';
import { eventsInsert } from './email-events';
import { type NewEmail, recipientsOf } from './emails';
import {
  findIdempotencyRecord,
  type IdempotencyRecord,
  type IdempotentResponse,
  recordIdempotentResponse,
} from './idempotency';
import type { AccountSql } from './object-sql';
import { deliveriesInsert, insertedIds } from './webhooks';

/**
 * The daily warm-up allowance of the account (route 1 and the batch): emails count their recipients on the UTC
 * day they were created. The statement adds them to the day's usage unless that would pass the allowance
 * (null = unlimited) and changes no row when it would.
 */
function reserveAllowance(db: AccountSql, emails: NewEmail[], allowance: number | null) {
  const day = emails[0]!.createdAt.slice(0, 10);
  const recipients = emails.reduce((sum, email) => sum + recipientsOf(email).length, 0);
  return db
    .prepare(
      `INSERT INTO daily_usage (day, recipients)
         SELECT ?1, ?2 WHERE ?2 <= ?3
         ON CONFLICT(day) DO UPDATE SET recipients = recipients + ?2 WHERE recipients + ?2 <= ?3`,
    )
    .bind(day, recipients, allowance ?? Number.MAX_SAFE_INTEGER);
}

/**
 * The operator's settings as the caller read them from the control plane: freeze mode holds NORMAL mail due
 * now, and `dailyAllowance` (null: unlimited) bounds the recipients this account accepts per UTC day.
 */
export type AcceptOptions = { countTowardsAllowance?: boolean; frozen?: boolean; dailyAllowance?: number | null };

/**
 * The statements that store one email: its row (QUEUED, or SCHEDULED with `scheduledAt`), recipients,
 * tags, attachment metadata and first events. `gate` decides whether anything is stored: the reservation
 * just before (`changes()`), or the first email of the same batch having been stored.
 */
function emailStatements(
  db: AccountSql,
  email: NewEmail,
  gate: { counted: boolean; anchorId: string | null; frozen: boolean },
) {
  const exists = 'EXISTS (SELECT 1 FROM emails WHERE id = ?1)';
  const insertRow = db
    .prepare(
      `INSERT INTO emails (id, account_id, template_id, sender_id, from_email, from_name, subject,
         priority, status, created_at, updated_at, due_at, held, scheduled_at, reply_to, headers, tags, test)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, CASE WHEN ?12 IS NULL THEN 'QUEUED' ELSE 'SCHEDULED' END,
         ?9, ?9, COALESCE(?12, ?9),
         CASE WHEN ?8 = 'NORMAL' AND ?12 IS NULL THEN ?17 ELSE 0 END,
         ?12, ?13, ?14, ?15, ?16
       WHERE CASE WHEN ?11 IS NULL THEN (?10 = 0 OR changes() > 0) ELSE EXISTS (SELECT 1 FROM emails WHERE id = ?11) END
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
      email.priority,
      msOf(email.createdAt),
      gate.counted ? 1 : 0, // ?10: the insert follows the reservation, and runs only if it changed a row
      gate.anchorId, // ?11: in a batch, stored only if the batch's first email was
      email.scheduledAt === null ? null : msOf(email.scheduledAt),
      JSON.stringify(email.replyTo),
      JSON.stringify(email.headers),
      JSON.stringify(email.tags),
      email.test ? 1 : 0,
      gate.frozen ? 1 : 0,
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
      msOf(email.createdAt),
      `${exists} AND (json_extract(j.value, '$.type') <> 'held' OR EXISTS (SELECT 1 FROM emails WHERE id = ?1 AND held = 1))`,
    ),
  ];
  if (email.tags.length > 0) {
    statements.push(
      db
        .prepare(
          `INSERT INTO email_tags (email_id, name, value, account_id, test, created_at, status)
           SELECT ?1, json_extract(value, '$.name'), json_extract(value, '$.value'), e.account_id, e.test,
             e.created_at, e.status
           FROM json_each(?2) JOIN emails e ON e.id = ?1`,
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
 * Stores QUEUED (or SCHEDULED) emails and everything of theirs in one transaction: all or none. A NORMAL email
 * due now is stored held while `frozen` (the object's alarm releases it once the control plane says unfrozen,
 * so an unfreeze that came meanwhile holds nothing back for long). With `countTowardsAllowance` the recipients
 * of every email are reserved first in the same transaction; when the allowance has no room, nothing is stored.
 */
export async function insertEmails(
  db: AccountSql,
  emails: NewEmail[],
  options: AcceptOptions = {},
): Promise<StoredEmails> {
  const counted = options.countTowardsAllowance === true;
  const first = emails[0]!;
  const perEmail = emails.map((email, index) =>
    emailStatements(db, email, { counted, anchorId: index === 0 ? null : first.id, frozen: options.frozen === true }),
  );
  const webhooks = deliveriesInsert(
    db,
    first.accountId,
    emails.map(emailQueuedEvent),
    msOf(first.createdAt),
    'EXISTS (SELECT 1 FROM emails WHERE id = ?4)',
    [first.id],
  );
  const reserve = counted ? [reserveAllowance(db, emails, options.dailyAllowance ?? null)] : [];
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
export async function insertEmail(db: AccountSql, email: NewEmail, options: AcceptOptions = {}) {
  const { stored, held, deliveryIds } = await insertEmails(db, [email], options);
  return { stored, held: held.has(email.id), deliveryIds };
}

/** How an accept ended: stored; refused by the allowance; or the key's record was there already (a replay). */
export type Accepted =
  | ({ kind: 'stored' } & StoredEmails)
  | { kind: 'refused' }
  | { kind: 'existing'; record: IdempotencyRecord };

/**
 * Accepting emails, all in one transaction of the account's object (its operations run as one): the key's record
 * looked up (a request with the key that won meanwhile is replayed, not stored again), the emails with their
 * allowance, their bodies until the alarm moves them to R2 (unless the caller put them there: `bodiesInR2`), and
 * the response under the key.
 */
export async function storeAcceptedEmails(
  db: AccountSql,
  emails: (NewEmail & EmailBody)[],
  options: AcceptOptions & { bodiesInR2?: boolean },
  idempotency: IdempotentResponse | null,
): Promise<Accepted> {
  if (idempotency) {
    const record = await findIdempotencyRecord(db, idempotency.space, idempotency.key);
    if (record) return { kind: 'existing', record };
  }
  const stored = await insertEmails(db, emails, options);
  if (!stored.stored) return { kind: 'refused' };
  if (!options.bodiesInR2) await keepBodies(db, emails);
  if (idempotency) await recordIdempotentResponse(db, idempotency);
  return { kind: 'stored', ...stored };
}
