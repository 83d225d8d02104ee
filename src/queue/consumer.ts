import { smtpConfig } from '../config';
import type { Bindings } from '../env';
import { findEmail, markUndeliverable, recordDeliveryOutcome, type EmailRecord } from '../db/emails';
import { classifySmtpError, SmtpConnection, type OutgoingMail, type SmtpOutcome } from '../mail/smtp';
import type { MailJob } from './producer';

/** Growing delays between attempts: 10 s, 30 s, 90 s, 270 s, then capped at 15 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(10 * 3 ** Math.max(attempts - 1, 0), 900);
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
  let connection: SmtpConnection | null = null;
  try {
    for (const message of batch.messages) {
      const email = await findEmail(env.DB, message.body.emailId);
      // Queues deliver at least once: an email already SENT or FAILED is done.
      if (!email || email.status !== 'QUEUED') {
        message.ack();
        continue;
      }
      if (!config) {
        message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
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
        message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
      }
    }
  } finally {
    await connection?.close();
  }
}

/** Messages whose retries ran out: the email is FAILED with its last reply. */
export async function handleDeadLetters(batch: MessageBatch<MailJob>, env: Bindings): Promise<void> {
  for (const message of batch.messages) {
    await markUndeliverable(env.DB, message.body.emailId);
    message.ack();
  }
}
