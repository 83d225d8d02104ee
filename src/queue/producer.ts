import { waitUntil } from 'cloudflare:workers';
import type { Bindings } from '../env';
import { deleteAttachments, type LoadedAttachment, storeAttachments } from '../mail/attachments';
import { bodyKeyOf, storeBodies } from '../mail/bodies';
import { deleteObjects } from '../mail/objects';
import { insertEmails, type StoredEmails } from '../store/account/email-store';
import { clearHeld, listHeldEmailIds, type NewEmail } from '../store/account/emails';
import { claimOverdueEmails, listScheduledDue, SCHEDULE_DISPATCH_SECONDS } from '../store/account/outbox';
import { queueDeliveries } from '../webhooks/deliver';
import type { EmailJob } from './jobs';

const emailJob = (emailId: string): EmailJob => ({ kind: 'email', emailId });

/** The queue message of an email due at `dueAt` (now, or a scheduled time at most a few minutes away). */
export function emailMessage(emailId: string, dueAt: string | null, now = Date.now()) {
  const delaySeconds = dueAt === null ? 0 : Math.max(Math.ceil((Date.parse(dueAt) - now) / 1000), 0);
  return { body: emailJob(emailId), contentType: 'json' as const, ...(delaySeconds > 0 ? { delaySeconds } : {}) };
}

/**
 * Queues the message of each email due now or within the dispatch window (a scheduled one delayed to its
 * time); the scheduled handler dispatches the others when their time comes near.
 */
export async function dispatchIfDueSoon(env: Bindings, emails: { id: string; scheduledAt: string | null }[]) {
  const now = Date.now();
  const messages = emails
    .filter((e) => e.scheduledAt === null || Date.parse(e.scheduledAt) - now <= SCHEDULE_DISPATCH_SECONDS * 1000)
    .map((e) => emailMessage(e.id, e.scheduledAt, now));
  if (messages.length > 0) await env.MAIL_QUEUE.sendBatch(messages);
}

/**
 * Stores emails as QUEUED (or SCHEDULED), all or none, with their bodies and attachments in R2 (deleted
 * again if the insert fails). Once D1 has them they are accepted: their queue messages (and webhook jobs)
 * are produced after the response, and one that fails is the outbox sweep's, which queues again any email overdue by
 * the grace period. A held email (freeze mode) gets no queue message until the operator unfreezes (see
 * `insertEmails`). Returns false when the daily allowance refused them.
 */
export async function enqueueEmails(
  env: Bindings,
  emails: NewEmail[],
  attachments: LoadedAttachment[],
  options: { countTowardsAllowance: boolean },
): Promise<boolean> {
  await Promise.all([storeAttachments(env.ATTACHMENTS, attachments), storeBodies(env.BODIES, emails)]);
  const metas = attachments.map((a) => a.meta);
  const discard = () =>
    Promise.all([
      deleteAttachments(env.ATTACHMENTS, metas),
      deleteObjects(
        env.BODIES,
        emails.map((e) => bodyKeyOf(e.id)),
      ),
    ]);
  let stored: StoredEmails;
  try {
    stored = await insertEmails(env.DB, emails, options);
  } catch (error) {
    await discard();
    throw error;
  }
  if (!stored.stored) {
    await discard();
    return false;
  }
  const due = emails.filter((email) => !stored.held.has(email.id));
  waitUntil(
    Promise.all([
      dispatchIfDueSoon(env, due).catch((error: unknown) =>
        console.error('mail not queued yet (the outbox sweep will)', String(error)),
      ),
      queueDeliveries(env, stored.deliveryIds),
    ]),
  );
  return true;
}

/**
 * Queues every held email, oldest first, 100 per queue batch. A held row is cleared only after its
 * message was produced, so a failure part-way leaves the rest held for the next release (nothing is
 * lost; a duplicate message is harmless because the consumer leases and checks status).
 */
export async function releaseHeldMail(env: Bindings): Promise<number> {
  let released = 0;
  for (;;) {
    const ids = await listHeldEmailIds(env.DB, 100);
    if (ids.length === 0) return released;
    await env.MAIL_QUEUE.sendBatch(ids.map((id) => ({ body: emailJob(id), contentType: 'json' as const })));
    await clearHeld(env.DB, ids);
    released += ids.length;
  }
}

/** How many overdue emails one sweep queues again at most (the next minute's sweep takes the rest). */
const SWEEP_LIMIT = 1_000;

/**
 * The outbox sweep (the scheduled handler, every minute): D1 is the truth, so a QUEUED email whose queue
 * message was lost (a crash between insert and send, a local queue that died with its process, a consumer
 * killed mid-batch) is queued again once it is overdue by the grace period. Duplicates are harmless: the
 * consumer leases each email and skips what is finished.
 */
export async function recoverOverdueMail(env: Bindings, graceSeconds: number): Promise<number> {
  const ids = await claimOverdueEmails(env.DB, graceSeconds, SWEEP_LIMIT);
  for (let i = 0; i < ids.length; i += 100) {
    const chunk = ids.slice(i, i + 100);
    await env.MAIL_QUEUE.sendBatch(chunk.map((id) => ({ body: emailJob(id), contentType: 'json' as const })));
  }
  return ids.length;
}

/**
 * Scheduled mail (the scheduled handler, every minute): every SCHEDULED email due within the dispatch
 * window gets a queue message delayed to its time; one already overdue goes at once (its message was lost,
 * say with a restarted `wrangler dev`). Each email is dispatched by one or two sweeps before its time;
 * duplicates are harmless (the consumer leases and checks status).
 */
export async function dispatchScheduledMail(env: Bindings): Promise<number> {
  const due = await listScheduledDue(env.DB, SCHEDULE_DISPATCH_SECONDS, SWEEP_LIMIT);
  const now = Date.now();
  for (let i = 0; i < due.length; i += 100) {
    await env.MAIL_QUEUE.sendBatch(due.slice(i, i + 100).map((e) => emailMessage(e.id, e.dueAt, now)));
  }
  return due.length;
}
