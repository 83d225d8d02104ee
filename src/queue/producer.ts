import { waitUntil } from 'cloudflare:workers';
import type { Bindings } from '../env';
import { deleteAttachments, type LoadedAttachment, storeAttachments } from '../mail/attachments';
import { bodyKeyOf, storeBodies } from '../mail/bodies';
import { deleteObjects } from '../mail/objects';
import { accountObject, accountStore } from '../store/account/client';
import type { Accepted } from '../store/account/email-store';
import { clearHeld, listHeldEmailIds, type NewEmail } from '../store/account/emails';
import { type IdempotentResponse, KeyAlreadyUsed } from '../store/account/idempotency';
import type { AccountSql } from '../store/account/object-sql';
import {
  claimOverdueEmails,
  claimOverdueScheduled,
  listScheduledDue,
  SCHEDULE_DISPATCH_SECONDS,
} from '../store/account/outbox';
import { accountsHoldingMail } from '../store/control/held-mail';
import type { Settings } from '../store/control/settings';
import { bucketsOf } from '../store/placement';
import { queueDeliveries } from '../webhooks/deliver';
import type { EmailJob } from './jobs';

const emailJob = (accountId: string, emailId: string): EmailJob => ({ kind: 'email', accountId, emailId });

/** The queue message of an email due at `dueAt` (now, or a scheduled time at most a few minutes away). */
export function emailMessage(accountId: string, emailId: string, dueAt: string | null, now = Date.now()) {
  const delaySeconds = dueAt === null ? 0 : Math.max(Math.ceil((Date.parse(dueAt) - now) / 1000), 0);
  const body = emailJob(accountId, emailId);
  return { body, contentType: 'json' as const, ...(delaySeconds > 0 ? { delaySeconds } : {}) };
}

async function sendInBatches(env: Bindings, messages: ReturnType<typeof emailMessage>[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 100) await env.MAIL_QUEUE.sendBatch(messages.slice(i, i + 100));
}

/**
 * Queues the message of each email due now or within the dispatch window (a scheduled one delayed to its
 * time); the account's alarm dispatches the others when their time comes near.
 */
export async function dispatchIfDueSoon(
  env: Bindings,
  accountId: string,
  emails: { id: string; scheduledAt: string | null }[],
) {
  const now = Date.now();
  const messages = emails
    .filter((e) => e.scheduledAt === null || Date.parse(e.scheduledAt) - now <= SCHEDULE_DISPATCH_SECONDS * 1000)
    .map((e) => emailMessage(accountId, e.id, e.scheduledAt, now));
  if (messages.length > 0) await sendInBatches(env, messages);
}

/**
 * How many bytes of bodies one accept keeps in the account's object; a larger batch (bodies made from templates
 * may be 512 KiB each) puts its bodies in R2 first, as a call to an object carries at most a few MiB well.
 */
const KEPT_BODIES_BYTES = 4 * 1024 * 1024;

const bodiesSize = (emails: NewEmail[]) =>
  emails.reduce((sum, e) => sum + (e.html?.length ?? 0) * 3 + (e.text?.length ?? 0) * 3, 0);

/**
 * Stores emails as QUEUED (or SCHEDULED), all or none: their attachments in R2 first (deleted again if nothing is
 * stored), then one transaction in the account's object (rows, allowance, bodies, the key's response). Once the
 * object has them they are accepted: their queue messages (and webhook jobs) are produced after the response, and
 * one that fails is the object's alarm's, which queues again any email overdue by the grace period. A held email
 * (freeze mode) gets no queue message until the operator unfreezes. Refused by the allowance: `refused`; the key
 * used meanwhile by another request: `KeyAlreadyUsed` is thrown with its record.
 */
export async function enqueueEmails(
  env: Bindings,
  emails: NewEmail[],
  attachments: LoadedAttachment[],
  options: { countTowardsAllowance: boolean; settings: Settings; idempotency: IdempotentResponse | null },
): Promise<'stored' | 'refused'> {
  const accountId = emails[0]!.accountId;
  const buckets = await bucketsOf(env, accountId);
  // Bodies travel with the call to the object unless together they are too large for one: then R2 first.
  const bodiesInR2 = bodiesSize(emails) > KEPT_BODIES_BYTES;
  await Promise.all([
    storeAttachments(buckets.attachments, attachments),
    bodiesInR2 ? storeBodies(buckets.bodies, emails) : undefined,
  ]);
  const discard = () =>
    Promise.all([
      deleteAttachments(
        buckets.attachments,
        attachments.map((a) => a.meta),
      ),
      bodiesInR2
        ? deleteObjects(
            buckets.bodies,
            emails.map((e) => bodyKeyOf(e.id)),
          )
        : undefined,
    ]);
  let accepted: Accepted;
  try {
    accepted = await accountStore(env, accountId).storeAcceptedEmails(
      emails,
      {
        countTowardsAllowance: options.countTowardsAllowance,
        frozen: options.settings.frozen,
        dailyAllowance: options.settings.dailyAllowance,
        bodiesInR2,
      },
      options.idempotency,
    );
  } catch (error) {
    await discard();
    throw error;
  }
  if (accepted.kind !== 'stored') {
    await discard();
    if (accepted.kind === 'existing') throw new KeyAlreadyUsed(accepted.record);
    return 'refused';
  }
  const due = emails.filter((email) => !accepted.held.has(email.id));
  waitUntil(
    Promise.all([
      dispatchIfDueSoon(env, accountId, due).catch((error: unknown) =>
        console.error('mail not queued yet (the account alarm will)', String(error)),
      ),
      queueDeliveries(env, accountId, accepted.deliveryIds),
    ]),
  );
  return 'stored';
}

/**
 * After an unfreeze: wakes each account whose object holds mail, a page at a time, so that it releases its mail
 * now rather than at its next look (within a minute). A failed wake-up is that look's to make up.
 */
export async function wakeAccountsHoldingMail(env: Bindings): Promise<number> {
  let woken = 0;
  let after = '';
  for (;;) {
    const accounts = await accountsHoldingMail(env.DB, after, 50);
    await Promise.all(
      accounts.map((id) =>
        accountObject(env, id)
          .wake()
          .catch((error: unknown) => console.error('held mail not released yet', id, String(error))),
      ),
    );
    woken += accounts.length;
    if (accounts.length < 50) return woken;
    after = accounts.at(-1)!;
  }
}

// What the account's alarm does with its mail (src/durable-objects/account-store.ts), on its own database.

/**
 * Queues every held email, oldest first, 100 per queue batch. A held row is cleared only after its message was
 * produced, so a failure part-way leaves the rest held for the next release (nothing is lost; a duplicate message
 * is harmless because the consumer leases and checks status).
 */
export async function releaseHeldMail(env: Bindings, db: AccountSql, accountId: string): Promise<number> {
  let released = 0;
  for (;;) {
    const ids = await listHeldEmailIds(db, 100);
    if (ids.length === 0) return released;
    await env.MAIL_QUEUE.sendBatch(ids.map((id) => ({ body: emailJob(accountId, id), contentType: 'json' as const })));
    await clearHeld(db, ids);
    released += ids.length;
  }
}

/** How many emails one alarm queues at most of each kind (the next alarm, at once, takes the rest). */
const ALARM_LIMIT = 1_000;

/**
 * The outbox recovery: the object is the truth, so a QUEUED email whose queue message was lost (a crash between
 * insert and send, a local queue that died with its process, a consumer killed mid-batch) is queued again once
 * it is overdue by the grace period. Duplicates are harmless: the consumer leases each email and skips what is
 * finished.
 */
export async function recoverOverdueMail(
  env: Bindings,
  db: AccountSql,
  accountId: string,
  graceSeconds: number,
): Promise<number> {
  const ids = await claimOverdueEmails(db, graceSeconds, ALARM_LIMIT);
  await sendInBatches(
    env,
    ids.map((id) => emailMessage(accountId, id, null)),
  );
  return ids.length;
}

/**
 * Scheduled mail: every SCHEDULED email due in (`after`, `until`] (not dispatched yet) gets a queue message delayed to its
 * time, and one still SCHEDULED past its time by the grace period (its message was lost) goes at once.
 * Duplicates are harmless (the consumer leases and checks status).
 */
export async function dispatchScheduledMail(
  env: Bindings,
  db: AccountSql,
  accountId: string,
  after: number,
  until: number,
  graceSeconds: number,
): Promise<number> {
  const now = Date.now();
  const due = await listScheduledDue(db, after, until, ALARM_LIMIT);
  const lost = await claimOverdueScheduled(db, graceSeconds, ALARM_LIMIT);
  const messages = [
    ...due.map((e) => emailMessage(accountId, e.id, e.dueAt, now)),
    ...lost.map((id) => emailMessage(accountId, id, null, now)),
  ];
  await sendInBatches(env, messages);
  return messages.length;
}
