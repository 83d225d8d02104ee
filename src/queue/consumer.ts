import { smtpConfig } from '../config';
import type { Bindings } from '../env';
import { claimForDelivery, holdEmail, markUndeliverable, recordDeliveryOutcome, type EmailRecord } from '../db/emails';
import { getSettings } from '../db/settings';
import { classifySmtpError, SmtpConnection, type OutgoingMail, type SmtpOutcome } from '../mail/smtp';
import { resendOtp } from '../otp/engine';
import type { EmailJob, MailJob, OtpRetryJob } from './producer';

/** Long enough for a connect and a send, each bounded by the SMTP timeout. */
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
 * Delivers a batch over one SMTP connection. Each message is acked or retried on its own, so one
 * failure never resends the others. A transient failure drops the connection (its state is unknown).
 */
export async function deliverMailBatch(batch: MessageBatch<MailJob>, env: Bindings): Promise<void> {
  const config = smtpConfig(env);
  const { frozen } = await getSettings(env.DB);
  let connection: SmtpConnection | null = null;
  try {
    for (const message of batch.messages) {
      const retry = () => message.retry({ delaySeconds: retryDelaySeconds(message.attempts, retryBase(env)) });
      if (!config) {
        retry();
        continue;
      }
      if ('kind' in message.body) {
        await retryOtpMail(message as Message<OtpRetryJob>, env, retry);
        continue;
      }
      const claim = await claimForDelivery(env.DB, message.body.emailId, DELIVERY_LEASE_SECONDS);
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
        await recordDeliveryOutcome(env.DB, email.id, { status: 'SENT', reply: null });
        message.ack();
      } else if (outcome.kind === 'permanent') {
        await recordDeliveryOutcome(env.DB, email.id, { status: 'FAILED', reply: outcome.reply });
        message.ack();
      } else {
        await recordDeliveryOutcome(env.DB, email.id, { status: 'QUEUED', reply: outcome.reply });
        await connection?.close();
        connection = null;
        retry();
      }
    }
  } finally {
    await connection?.close();
  }
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

/** Messages whose retries ran out: the email is FAILED with its last reply (an OTP mail just expires). */
export async function handleDeadLetters(batch: MessageBatch<MailJob>, env: Bindings): Promise<void> {
  for (const message of batch.messages) {
    if (!('kind' in message.body)) await markUndeliverable(env.DB, (message.body as EmailJob).emailId);
    message.ack();
  }
}
