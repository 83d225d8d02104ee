// The queue consumer: a dispatcher over one function per job kind (email jobs: deliver-email.ts).
import { config } from '../config';
import type { Bindings } from '../env';
import type { Probed } from '../mail/routes/send';
import { classifySmtpError, type SmtpOutcome } from '../mail/smtp/connection';
import { resendOtp } from '../otp/engine';
import { accountStore } from '../store/account/client';
import { deliverWebhooks, queueDeliveries } from '../webhooks/deliver';
import { deliverEmails } from './deliver-email';
import type { Delivery, JobKind, MailJob, OtpRetryJob, Retry, VerificationHistoryJob } from './jobs';
import { retryDelaySeconds } from './retry';

type ByKind = { [K in JobKind]: Delivery<Extract<MailJob, { kind: K }>>[] };

function byKind(messages: readonly Message<MailJob>[]): ByKind {
  const jobs: ByKind = { email: [], 'otp-retry': [], 'otp-history': [], webhook: [] };
  for (const message of messages) {
    const job = message.body;
    (jobs[job.kind] as Delivery<MailJob>[]).push({ message, job });
  }
  return jobs;
}

/**
 * Runs each message of a batch through the function of its kind (both queues, `postcode-mail` and
 * `postcode-webhooks`, come here); each message is acked or retried on its own.
 */
export async function deliverMailBatch(batch: MessageBatch<MailJob>, env: Bindings): Promise<void> {
  const { routes, retry: backoff, webhooks } = config(env);
  const retry: Retry = (message) =>
    message.retry({ delaySeconds: retryDelaySeconds(message.attempts, backoff.baseSeconds) });
  const jobs = byKind(batch.messages);
  await deliverWebhooks(jobs.webhook, env, webhooks);
  await writeVerificationHistory(jobs['otp-history'], env, retry);
  if (routes.length === 0) {
    // Mail waits (with backoff) until a route is configured; the history rows above need none.
    for (const { message } of [...jobs['otp-retry'], ...jobs.email]) retry(message);
    return;
  }
  // A route that is down costs the batch's retries one probe (see throughRoutes in src/mail/routes/send.ts).
  const probed = new Set<string>();
  await retryOtpMails(jobs['otp-retry'], env, retry, probed);
  await deliverEmails(jobs.email, env, routes, backoff, probed);
}

/** OTP mail is sent on its own connection: it is rare here (only after a failed in-request send). */
async function retryOtpMails(
  deliveries: Delivery<OtpRetryJob>[],
  env: Bindings,
  retry: Retry,
  probed: Probed,
): Promise<void> {
  for (const { message, job } of deliveries) {
    let outcome: SmtpOutcome;
    try {
      outcome = await resendOtp(env, job, probed);
    } catch (error) {
      outcome = classifySmtpError(error);
    }
    if (outcome.kind === 'transient') retry(message);
    else message.ack();
  }
}

/** Verification history rows that could not be written during the request (the write is idempotent). */
async function writeVerificationHistory(deliveries: Delivery<VerificationHistoryJob>[], env: Bindings, retry: Retry) {
  for (const { message, job } of deliveries) {
    try {
      const { accountId } = job.entry;
      await queueDeliveries(env, accountId, await accountStore(env, accountId).recordVerification(job.entry));
      message.ack();
    } catch {
      retry(message);
    }
  }
}

/**
 * Messages whose queue retries ran out. An email or a webhook delivery is not decided here: its row counts
 * its own attempts and fails itself after the last one, and a row still waiting is queued again by the
 * account alarm. An OTP mail just expires; a verification's history row is reported as lost, and so is an email
 * event that never found its send.
 */
export async function handleDeadLetters(batch: MessageBatch<MailJob>): Promise<void> {
  for (const message of batch.messages) {
    const job = message.body;
    if (job.kind === 'otp-history') console.error('verification history lost after retries', job.entry.sessionId);
    if (batch.queue === 'postcode-email-events-dlq') {
      console.warn(
        'email event dropped after its retries: no recorded send names it',
        JSON.stringify(job).slice(0, 300),
      );
    }
    message.ack();
  }
}
