// Email jobs: a batch of queued emails delivered over one SMTP connection.
import type { SmtpConfig } from '../config';
import { claimForDelivery, type DeliveryOutcome, holdEmail, recordDeliveryOutcomes } from '../db/delivery';
import type { EmailRecord } from '../db/emails';
import { getSettings } from '../db/settings';
import type { Bindings } from '../env';
import { classifySmtpError, type OutgoingMail, SmtpConnection, type SmtpOutcome } from '../mail/smtp';
import type { Delivery, Retry } from './consumer';
import type { EmailJob } from './producer';

/** Base lease of a batch; each message adds time for a connect and a send within the SMTP timeouts. */
const DELIVERY_LEASE_SECONDS = 60;

function toOutgoingMail(email: EmailRecord): OutgoingMail {
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
 * Delivers the email jobs of a batch over one SMTP connection. The batch costs three D1 round trips
 * whatever its size: settings, claims (the delivery leases) and outcomes. Each message is acked or
 * retried on its own, after its outcome is recorded, so one failure never resends the others. A
 * transient failure drops the connection (its state is unknown).
 */
export async function deliverEmails(
  deliveries: Delivery<EmailJob>[],
  env: Bindings,
  smtp: SmtpConfig,
  retry: Retry,
): Promise<void> {
  if (deliveries.length === 0) return;
  // Long enough for every message of the batch to connect and send within the SMTP timeouts.
  const leaseSeconds = DELIVERY_LEASE_SECONDS + deliveries.length * 20;
  const [{ frozen }, claims] = await Promise.all([
    getSettings(env.DB),
    claimForDelivery(
      env.DB,
      deliveries.map((d) => d.job.emailId),
      leaseSeconds,
    ),
  ]);
  const outcomes: DeliveryOutcome[] = [];
  const settle: (() => void)[] = [];
  let connection: SmtpConnection | null = null;
  try {
    for (const { message, job } of deliveries) {
      const claim = claims.get(job.emailId)!;
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
        connection ??= await SmtpConnection.open(smtp);
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
