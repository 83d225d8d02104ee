// Scheduled emails: cancel one, or move it, while it is still SCHEDULED (the consumer's claim turns it
// QUEUED the moment it leaves, in the same kind of single-statement check, so the two cannot both win).
import { nowIso } from '../ids';
import type { AttachmentMeta } from '../mail/attachments';
import { emailCanceledEvent } from '../webhooks/produce';
import { eventsInsert } from './email-events';
import { deliveriesInsert, insertedIds } from './webhooks';

/** Which emails a caller may touch: its account's, and only those of its key's mode. */
export type EmailOwner = { accountId: string; test: boolean };

/** The owner's email `id` is still SCHEDULED (`test` is a 0/1 literal, never input). */
const stillScheduled = (id: string, account: string, owner: EmailOwner) =>
  `EXISTS (SELECT 1 FROM emails WHERE id = ${id} AND account_id = ${account} AND test = ${owner.test ? 1 : 0}
     AND status = 'SCHEDULED')`;

export type ScheduleChange =
  | { kind: 'changed'; attachments: AttachmentMeta[]; scheduledAt: string | null; deliveryIds: string[] }
  /** The owner's email, but no longer SCHEDULED (it left, or was canceled). */
  | { kind: 'not-scheduled'; status: string }
  | { kind: 'not-found' };

async function outcome(
  db: D1Database,
  owner: EmailOwner,
  id: string,
  changed: D1Result | undefined,
  deliveryIds: string[],
): Promise<ScheduleChange> {
  const row = changed?.results[0] as { attachments: string; scheduled_at: string | null } | undefined;
  if (row) {
    return {
      kind: 'changed',
      attachments: JSON.parse(row.attachments) as AttachmentMeta[],
      scheduledAt: row.scheduled_at,
      deliveryIds,
    };
  }
  const found = await db
    .prepare('SELECT status FROM emails WHERE id = ? AND account_id = ? AND test = ?')
    .bind(id, owner.accountId, owner.test ? 1 : 0)
    .first<{ status: string }>();
  return found ? { kind: 'not-scheduled', status: found.status } : { kind: 'not-found' };
}

const RETURNING = `RETURNING scheduled_at, (SELECT json_group_array(json_object('filename', filename,
  'contentType', content_type, 'contentId', content_id, 'size', size, 'key', r2_key))
  FROM email_attachments WHERE email_id = emails.id) AS attachments`;

/** Cancels a SCHEDULED email: status and recipients CANCELED, a `canceled` event and its webhook. */
export async function cancelScheduled(db: D1Database, owner: EmailOwner, id: string): Promise<ScheduleChange> {
  const at = nowIso();
  const [email, to] = await db.batch([
    db.prepare('SELECT id, subject, tags FROM emails WHERE id = ? AND account_id = ?').bind(id, owner.accountId),
    db.prepare(`SELECT address FROM email_recipients WHERE email_id = ? AND kind = 'to' ORDER BY position`).bind(id),
  ]);
  const row = email!.results[0] as { id: string; subject: string; tags: string } | undefined;
  const toAddresses = (to!.results as { address: string }[]).map((r) => r.address);
  const webhookEvents = row ? [emailCanceledEvent({ ...row, toAddresses, tags: JSON.parse(row.tags) })] : [];
  const results = await db.batch([
    deliveriesInsert(db, owner.accountId, webhookEvents, at, stillScheduled('?4', '?1', owner), [id]),
    eventsInsert(db, id, [{ type: 'canceled', detail: null }], at, stillScheduled('?1', '?2', owner), owner.accountId),
    db
      .prepare(
        `UPDATE email_recipients SET status = 'CANCELED' WHERE email_id = ?1 AND ${stillScheduled('?1', '?2', owner)}`,
      )
      .bind(id, owner.accountId),
    db
      .prepare(
        `UPDATE emails SET status = 'CANCELED', updated_at = ?3, due_at = NULL
         WHERE id = ?1 AND account_id = ?2 AND test = ?4 AND status = 'SCHEDULED' ${RETURNING}`,
      )
      .bind(id, owner.accountId, at, owner.test ? 1 : 0),
  ]);
  return outcome(db, owner, id, results[3], insertedIds(results[0]));
}

/** Moves a SCHEDULED email to `scheduledAt`, with a `rescheduled` event. */
export async function reschedule(
  db: D1Database,
  owner: EmailOwner,
  id: string,
  scheduledAt: string,
): Promise<ScheduleChange> {
  const at = nowIso();
  const results = await db.batch([
    eventsInsert(
      db,
      id,
      [{ type: 'rescheduled', detail: scheduledAt }],
      at,
      stillScheduled('?1', '?2', owner),
      owner.accountId,
    ),
    db
      .prepare(
        `UPDATE emails SET scheduled_at = ?3, due_at = ?3, updated_at = ?4
         WHERE id = ?1 AND account_id = ?2 AND test = ?5 AND status = 'SCHEDULED' ${RETURNING}`,
      )
      .bind(id, owner.accountId, scheduledAt, at, owner.test ? 1 : 0),
  ]);
  return outcome(db, owner, id, results[1], []);
}
