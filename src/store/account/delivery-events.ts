// Reports from after the relay (src/mail/delivery-events.ts decides what they mean): the recipient they are
// about, found in one round trip, and the change written in one transaction — recipient, timeline, email
// status, suppression and webhook deliveries — only if the recipient is still as it was read.

import { nowIso } from '../../ids';
import type { BounceType, DeliveryEvent, EventTarget, RecipientChange } from '../../mail/delivery-events';
import type { EmailEvent, RecipientStatus } from '../../mail/outcome';
import type { WebhookEvent } from '../../webhooks/events';
import { eventsInsert } from './email-events';
import { EMAIL_STATUS_SQL, type EmailRecord, type EmailRow, SELECT_EMAIL, toEmail } from './emails';
import type { AccountSql } from './object-sql';
import { SUPPRESSION_CONFLICT, SUPPRESSION_UPSERT, suppressedNow } from './suppressions';
import { deliveriesInsert, insertedIds } from './webhooks';

export type EventRecipient = {
  email: EmailRecord;
  position: number;
  address: string;
  canonical: string;
  status: RecipientStatus;
  bounceType: BounceType | null;
  route: string | null;
  /** Every recipient's position and status (to tell the email's status after a change). */
  statuses: [number, RecipientStatus][];
  /** The address is on the account's list now. */
  suppressed: boolean;
};

type RecipientRow = {
  email_id: string;
  position: number;
  address: string;
  canonical: string;
  status: RecipientStatus;
  bounce_type: BounceType | null;
  route: string | null;
  statuses: string;
  suppressed: number;
};

const targetCondition = (target: EventTarget) => ('emailId' in target ? 'r.email_id = ?1' : 'r.provider_id = ?1');
const targetValue = (target: EventTarget) => ('emailId' in target ? target.emailId : target.providerId);

/** The recipient a report names (matched without regard to case, as reports spell addresses as they like). */
export async function findEventRecipient(
  db: AccountSql,
  target: EventTarget,
  canonical: string,
): Promise<EventRecipient | null> {
  const match = `${targetCondition(target)} AND lower(r.canonical) = lower(?2)`;
  const [recipients, emails] = await db.batch([
    db
      .prepare(
        `SELECT r.email_id, r.position, r.address, r.canonical, r.status, r.bounce_type, r.route,
           (SELECT json_group_array(json_array(position, status)) FROM email_recipients WHERE email_id = r.email_id)
             AS statuses,
           EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = e.account_id AND s.email = r.canonical
             AND ${suppressedNow('?3')}) AS suppressed
         FROM email_recipients r JOIN emails e ON e.id = r.email_id WHERE ${match} ORDER BY r.position LIMIT 1`,
      )
      .bind(targetValue(target), canonical, Date.now()),
    db
      .prepare(`${SELECT_EMAIL} WHERE e.id = (SELECT r.email_id FROM email_recipients r WHERE ${match} LIMIT 1)`)
      .bind(targetValue(target), canonical),
  ]);
  const row = recipients!.results[0] as RecipientRow | undefined;
  const email = emails!.results[0] as EmailRow | undefined;
  if (!row || !email) return null;
  return {
    email: toEmail(email),
    position: row.position,
    address: row.address,
    canonical: row.canonical,
    status: row.status,
    bounceType: row.bounce_type,
    route: row.route,
    statuses: JSON.parse(row.statuses) as [number, RecipientStatus][],
    suppressed: row.suppressed === 1,
  };
}

/** The recipient as it was read, as one value a condition compares (`?1` email id, `?K` the key). */
const stateOf = (r: Pick<EventRecipient, 'position' | 'status' | 'bounceType'>) =>
  `${r.position}:${r.status}:${r.bounceType ?? ''}`;
const STATE = `position || ':' || status || ':' || COALESCE(bounce_type, '')`;
const unchanged = (emailParam: string, keyParam: string) =>
  `EXISTS (SELECT 1 FROM email_recipients WHERE email_id = ${emailParam} AND ${STATE} = ${keyParam})`;

export type AppliedChange = {
  recipient: EventRecipient;
  event: DeliveryEvent;
  change: RecipientChange;
  timeline: EmailEvent;
  webhookEvents: WebhookEvent[];
  /** When a suppression the change adds stops blocking (epoch ms; null: never). */
  suppressUntil: number | null;
};

/**
 * Writes a change in one transaction; nothing is written if the recipient changed since it was read (a
 * second copy of the report, applied at the same time, finds it changed). Returns the webhook deliveries.
 */
export async function applyRecipientChange(db: AccountSql, applied: AppliedChange): Promise<string[]> {
  const { recipient, change, event } = applied;
  const { email } = recipient;
  const at = Date.now();
  const key = stateOf(recipient);
  const suppress = change.suppress && !email.test ? change.suppress : null;
  const results = await db.batch([
    deliveriesInsert(db, email.accountId, applied.webhookEvents, at, unchanged('?4', '?5'), [email.id, key]),
    eventsInsert(db, email.id, [applied.timeline], at, unchanged('?1', '?2'), key),
    ...(suppress
      ? [
          db
            .prepare(
              `${SUPPRESSION_UPSERT} SELECT ?3, ?4, ?5, ?6, ?1, ?7, 'feedback', ?8 WHERE ${unchanged('?1', '?2')}
               ${SUPPRESSION_CONFLICT}`,
            )
            .bind(
              email.id,
              key,
              email.accountId,
              recipient.canonical,
              suppress,
              event.diagnostic,
              applied.suppressUntil,
              nowIso(),
            ),
        ]
      : []),
    db
      .prepare(
        `UPDATE email_recipients SET status = ?3, bounce_type = ?4, bounce_reason = ?7, reply = COALESCE(?5, reply),
           route = COALESCE(route, ?6)
         WHERE email_id = ?1 AND ${STATE} = ?2`,
      )
      .bind(email.id, key, change.status, change.bounceType, event.diagnostic, event.route, change.bounceReason),
    db
      .prepare(
        `UPDATE emails SET status = ${EMAIL_STATUS_SQL}, updated_at = ?2
         WHERE id = ?1 AND status IN ('SENT', 'DELIVERED', 'BOUNCED') AND status <> ${EMAIL_STATUS_SQL}`,
      )
      .bind(email.id, at),
  ]);
  return insertedIds(results[0]);
}
