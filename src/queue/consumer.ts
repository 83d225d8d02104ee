import { smtpConfig } from '../config';
import type { Bindings } from '../env';
import { claimForDelivery, holdEmail, markUndeliverable, recordDeliveryOutcomes, type DeliveryOutcome, type EmailRecord } from '../db/emails';
import { recordVerification } from '../db/otp-history';
import { getSettings } from '../db/settings';
import { classifySmtpError, SmtpConnection, type OutgoingMail, type SmtpOutcome } from '../mail/smtp';
import { resendOtp } from '../otp/engine';
import type { EmailJob, MailJob, OtpRetryJob, VerificationHistoryJob } from './producer';

/** Base lease of a batch; each message adds time for a connect and a send within the SMTP timeouts. */
const DELIVERY_LEASE_SECONDS = 60;

/** Growing delays between attempts: base, 3×, 9×, … (10 s, 30 s, 90 s, 270 s, 810 s by default), capped at 15 min. */
export function retryDelaySeconds(attempts: number, baseSeconds = 10): number {
  return Math.min(baseSeconds * 3 ** Math.max(attempts - 1, 0), 900);
}

function retryBase(env: Bindings): number {
  const base = Number(env.MAIL_RETRY_BASE_SECONDS);
  return Number.isFinite(base) && base >= 0 ? base : 10;
}

export function toOutgoingMail(email: EmailRecord): OutgoingMail {
  return {
    from: { email: email.fromEmail, name: email.fromName },
    to: email.toAddresses,
    subject: email.subject,
    html: email.html,
    text: email.text,
    messageId: email.messageId,
  };
}

/**
 * Delivers a batch over one SMTP connection. The batch costs three D1 round trips whatever its size:
 * settings, claims (the delivery leases) and outcomes. Each message is acked or retried on its own,
 * after its outcome is recorded, so one failure never resends the others. A transient failure drops
 * the connection (its state is unknown).
 */
export async function deliverMailBatch(batch: MessageBatch<MailJob>, env: Bindings): Promise<void> {
  const config = smtpConfig(env);
  const retry = (message: Message<MailJob>) =>
    message.retry({ delaySeconds: retryDelaySeconds(message.attempts, retryBase(env)) });
  const emailMessages: Message<EmailJob>[] = [];
  for (const message of batch.messages) {
    const job = message.body;
    if ('kind' in job && job.kind === 'otp-history') await writeVerificationHistory(message, job, env, () => retry(message));
    else if (!config) retry(message);
    else if ('kind' in job) await retryOtpMail(message as Message<OtpRetryJob>, env, () => retry(message));
    else emailMessages.push(message as Message<EmailJob>);
  }
  if (!config || emailMessages.length === 0) return;

  // Long enough for every message of the batch to connect and send within the SMTP timeouts.
  const leaseSeconds = DELIVERY_LEASE_SECONDS + emailMessages.length * 20;
  const [{ frozen }, claims] = await Promise.all([
    getSettings(env.DB),
    claimForDelivery(env.DB, emailMessages.map((m) => m.body.emailId), leaseSeconds),
  ]);
  const outcomes: DeliveryOutcome[] = [];
  const settle: (() => void)[] = [];
  let connection: SmtpConnection | null = null;
  try {
    for (const message of emailMessages) {
      const claim = claims.get(message.body.emailId)!;
      // Queues deliver at least once: an email already SENT or FAILED, or held, is done here.
      if (claim.kind === 'done' || claim.kind === 'held') {
        message.ack();
        continue;
      }
      if (claim.kind === 'busy') {
        message.retry({ delaySeconds: claim.retryInSeconds });
        continue;
      }
      const email = claim.email;
      if (frozen && email.priority === 'NORMAL') {
        await holdEmail(env.DB, email.id);
        message.ack();
        continue;
      }
      let outcome: SmtpOutcome;
      try {
        connection ??= await SmtpConnection.open(config);
        outcome = await connection.send(toOutgoingMail(email));
      } catch (error) {
        outcome = classifySmtpError(error);
      }
      if (outcome.kind === 'accepted') {
        outcomes.push({ id: email.id, status: 'SENT', reply: null });
        settle.push(() => message.ack());
      } else if (outcome.kind === 'permanent') {
        outcomes.push({ id: email.id, status: 'FAILED', reply: outcome.reply });
        settle.push(() => message.ack());
      } else {
        outcomes.push({ id: email.id, status: 'QUEUED', reply: outcome.reply });
        settle.push(() => retry(message));
        await connection?.close();
        connection = null;
      }
    }
  } finally {
    await connection?.close();
  }
  // If this write fails nothing is acked and the batch comes back: the leases make the redelivery
  // wait, and a mail sent twice that way keeps its Message-ID.
  await recordDeliveryOutcomes(env.DB, outcomes);
  for (const apply of settle) apply();
}

/** OTP mail is sent on its own connection: it is rare here (only after a failed in-request send). */
async function retryOtpMail(message: Message<OtpRetryJob>, env: Bindings, retry: () => void): Promise<void> {
  let outcome: SmtpOutcome;
  try {
    outcome = await resendOtp(env, message.body);
  } catch (error) {
    outcome = classifySmtpError(error);
  }
  if (outcome.kind === 'transient') retry();
  else message.ack();
}

/** A verification's history row that could not be written during the request (the write is idempotent). */
async function writeVerificationHistory(message: Message<MailJob>, job: VerificationHistoryJob, env: Bindings, retry: () => void) {
  try {
    await recordVerification(env.DB, job.entry);
    message.ack();
  } catch {
    retry();
  }
}

/**
 * Messages whose retries ran out: the email is FAILED with its last reply (an OTP mail just expires;
 * a verification's history row is reported as lost).
 */
export async function handleDeadLetters(batch: MessageBatch<MailJob>, env: Bindings): Promise<void> {
  for (const message of batch.messages) {
    const job = message.body;
    if (!('kind' in job)) await markUndeliverable(env.DB, job.emailId);
    else if (job.kind === 'otp-history') console.error('verification history lost after retries', job.entry.sessionId);
    message.ack();
  }
}
