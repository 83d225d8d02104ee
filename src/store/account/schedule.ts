// Scheduled emails: cancel one, or move it, while it is still SCHEDULED. Each change is one transaction whose
// statements all check that status, like the consumer's claim that turns it QUEUED when it leaves: of a
// cancel and a delivery, only one can win.

import type { AttachmentMeta } from '../../mail/attachments';
import { emailCanceledEvent } from '../../webhooks/produce';
import type { SqlStatement } from '../sql';
import { msOf } from '../time';
import { eventsInsert } from './email-events';
import { type EmailRecord, findEmail } from './emails';
import type { AccountSql } from './object-sql';
import { deliveriesInsert, insertedIds } from './webhooks';

/** Which emails a caller may touch: its account's, and only those of its key's mode. */
export type EmailOwner = { accountId: string; test: boolean };

export type ScheduleChange =
  | { kind: 'changed'; attachments: AttachmentMeta[]; deliveryIds: string[] }
  /** The owner's email, but no longer SCHEDULED (it left, or was canceled). */
  | { kind: 'not-scheduled'; status: string }
  | { kind: 'not-found' };

/** `?1` (the email id) is still SCHEDULED. */
const STILL_SCHEDULED = `EXISTS (SELECT 1 FROM emails WHERE id = ?1 AND status = 'SCHEDULED')`;

/** The owner's email, or why it cannot be changed. */
async function scheduledEmail(db: AccountSql, owner: EmailOwner, id: string): Promise<EmailRecord | ScheduleChange> {
  const email = await findEmail(db, id);
  if (!email || email.accountId !== owner.accountId || email.test !== owner.test) return { kind: 'not-found' };
  return email.status === 'SCHEDULED' ? email : { kind: 'not-scheduled', status: email.status };
}

/**
 * Runs `statements`, the last one the email's update; the change did not happen if the email left
 * meanwhile. `deliveries`: the first statement inserted webhook deliveries (their ids are returned).
 */
async function change(
  db: AccountSql,
  owner: EmailOwner,
  email: EmailRecord,
  statements: SqlStatement[],
  deliveries = false,
): Promise<ScheduleChange> {
  const results = await db.batch(statements);
  if (results.at(-1)!.meta.changes === 0) {
    const now = await scheduledEmail(db, owner, email.id);
    return 'id' in now ? { kind: 'not-scheduled', status: now.status } : now;
  }
  return { kind: 'changed', attachments: email.attachments, deliveryIds: deliveries ? insertedIds(results[0]) : [] };
}

/** Cancels a SCHEDULED email: status and recipients CANCELED, a `canceled` event and its webhook. */
export async function cancelScheduled(db: AccountSql, owner: EmailOwner, id: string): Promise<ScheduleChange> {
  const email = await scheduledEmail(db, owner, id);
  if (!('id' in email)) return email;
  const at = Date.now();
  return change(
    db,
    owner,
    email,
    [
      deliveriesInsert(db, owner.accountId, [emailCanceledEvent(email)], at, STILL_SCHEDULED.replace('?1', '?4'), [id]),
      eventsInsert(db, id, [{ type: 'canceled', detail: null }], at, STILL_SCHEDULED),
      db.prepare(`UPDATE email_recipients SET status = 'CANCELED' WHERE email_id = ?1 AND ${STILL_SCHEDULED}`).bind(id),
      db
        .prepare(
          `UPDATE emails SET status = 'CANCELED', updated_at = ?2, due_at = NULL WHERE id = ?1 AND status = 'SCHEDULED'`,
        )
        .bind(id, at),
    ],
    true,
  );
}

/** Moves a SCHEDULED email to `scheduledAt`, with a `rescheduled` event. */
export async function reschedule(
  db: AccountSql,
  owner: EmailOwner,
  id: string,
  scheduledAt: string,
): Promise<ScheduleChange> {
  const email = await scheduledEmail(db, owner, id);
  if (!('id' in email)) return email;
  const at = Date.now();
  return change(db, owner, email, [
    eventsInsert(db, id, [{ type: 'rescheduled', detail: scheduledAt }], at, STILL_SCHEDULED),
    db
      .prepare(
        `UPDATE emails SET scheduled_at = ?2, due_at = ?2, updated_at = ?3 WHERE id = ?1 AND status = 'SCHEDULED'`,
      )
      .bind(id, msOf(scheduledAt), at),
  ]);
}
