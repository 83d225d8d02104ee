// Delivery through the real consumer with batches built by hand, so acks, retries and delays are visible.
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { newEmailId } from '../../src/ids';
import worker from '../../src/index';
import { storeBodies } from '../../src/mail/bodies';
import type { BounceReason } from '../../src/mail/bounce-reasons';
import { applyDeliveryEvent } from '../../src/mail/feedback';
import type { MailJob } from '../../src/queue/jobs';
import { accountStore } from '../../src/store/account/client';
import type { NewEmail } from '../../src/store/account/emails';
import { accountIdOfEmail, emailDb } from './account-db';

/** An email as the API would accept it, to `to`, of the account; `fields` replace the defaults. */
export function testEmail(accountId: string, to: string | string[], fields: Partial<NewEmail> = {}): NewEmail {
  const id = fields.id ?? newEmailId(accountId);
  return {
    id,
    accountId,
    templateId: null,
    senderId: null,
    fromEmail: 'no-reply@postcode.dev',
    fromName: 'postcode',
    subject: `Subject ${id}`,
    html: '<p>hi</p>',
    text: 'hi',
    priority: 'NORMAL',
    messageId: `<${id}@postcode.dev>`,
    toAddresses: typeof to === 'string' ? [to] : to,
    ccAddresses: [],
    bccAddresses: [],
    replyTo: [],
    headers: {},
    tags: [],
    attachments: [],
    scheduledAt: null,
    test: false,
    createdAt: new Date().toISOString(),
    ...fields,
  };
}

/**
 * Stores a QUEUED email (SCHEDULED with `scheduledAt`), its body in R2, without producing a queue message, so only our
 * batches deliver it, until the account's alarm finds it overdue (OUTBOX_GRACE_SECONDS, 30 s) and queues it itself;
 * `fields` replace the defaults.
 */
export async function storedEmail(accountId: string, to: string | string[], fields: Partial<NewEmail> = {}) {
  const email = testEmail(accountId, to, fields);
  await storeBodies(env.BODIES, [email]);
  await accountStore(env, accountId).insertEmail(email);
  return email.id;
}

/** The time of the email's next attempt has come (a retry delay has passed). */
export async function makeDue(id: string) {
  const db = await emailDb(id);
  await db
    .prepare(`UPDATE emails SET due_at = ${Date.parse('2000-01-01T00:00:00.000Z')} WHERE id = ?`)
    .bind(id)
    .run();
}

/** Email jobs as the producers write them (the account from the id's tag). */
export const emailJobs = (emailIds: string[]): Promise<MailJob[]> =>
  Promise.all(
    emailIds.map(async (emailId) => ({ kind: 'email', accountId: await accountIdOfEmail(emailId), emailId })),
  );

export async function runBatch(emailIds: string[], attempts = 1, queueName = 'postcode-mail', bindings = env) {
  return runJobs(await emailJobs(emailIds), attempts, queueName, bindings);
}

/** Runs jobs as written (old shapes included); message ids are `msg-<index>-<emailId or kind>`. */
export async function runJobs(jobs: MailJob[], attempts = 1, queueName = 'postcode-mail', bindings = env) {
  const batch = createMessageBatch<MailJob>(
    queueName,
    jobs.map((body, i) => ({
      id: `msg-${i}-${'emailId' in body ? body.emailId : body.kind}`,
      timestamp: new Date(),
      attempts,
      body,
    })),
  );
  // getQueueResult does not report per-message delays; record what the consumer asked for.
  const delays: Record<string, number | undefined> = {};
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    message.retry = (options?: QueueRetryOptions) => {
      delays[message.id] = options?.delaySeconds;
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await worker.queue(batch, bindings);
  return { ...(await getQueueResult(batch, ctx)), delays };
}

/** A report that one recipient of an email bounced for `bounceReason`, applied as the email() handler would. */
export function bounce(emailId: string, recipient: string, bounceReason: BounceReason) {
  return applyDeliveryEvent(env, {
    target: { emailId },
    recipient,
    kind: 'bounced',
    bounceReason,
    diagnostic: null,
    route: null,
  });
}
