// Email jobs: a batch of queued emails delivered over one SMTP connection, each recorded as soon as the
// server has answered it.
import type { Config, SmtpConfig } from '../config';
import { claimForDelivery, type DeliveryClaim, holdEmail, recordAttempt } from '../db/delivery';
import type { EmailRecord } from '../db/emails';
import { getSettings } from '../db/settings';
import type { Bindings } from '../env';
import { deleteAttachments, outgoingAttachments } from '../mail/attachments';
import { readBody } from '../mail/bodies';
import { senderIdentity } from '../mail/domains';
import { type AttemptResult, type Recipient, settleAttempt, skipSuppressed } from '../mail/outcome';
import type { OutgoingMail } from '../mail/outgoing';
import { classifySmtpError, SmtpConnection, type SmtpOutcome } from '../mail/smtp/connection';
import { simulatedOutcome } from '../mail/test-mode';
import { queueDeliveries } from '../webhooks/deliver';
import { emailAttemptEvents } from '../webhooks/produce';
import type { Delivery, EmailJob } from './jobs';
import { retryDelaySeconds } from './retry';

/**
 * The lease of each claimed email, renewed for the rest of the batch by the first message recorded once
 * `LEASE_RENEWAL_MS` have passed since the last renewal. Between two renewals there are at most those 10 s,
 * then one connect and one send (15 s SMTP timeout each) and a close (2 s), so 60 s leaves room; a lease
 * left by a crashed consumer runs out within it.
 */
export const DELIVERY_LEASE_SECONDS = 60;
const LEASE_RENEWAL_MS = 10_000;

/** The message as the server gets it: Bcc recipients are in the envelope only, never in a header. */
async function toOutgoingMail(email: EmailRecord, waiting: Recipient[], env: Bindings): Promise<OutgoingMail> {
  const [{ html, text }, identity] = await Promise.all([
    readBody(env.BODIES, email.id),
    senderIdentity(env, email.accountId, email.fromEmail, email.id),
  ]);
  return {
    ...identity,
    from: { email: email.fromEmail, name: email.fromName },
    to: email.toAddresses,
    cc: email.ccAddresses,
    replyTo: email.replyTo,
    envelopeTo: waiting.map((r) => r.address),
    subject: email.subject,
    html,
    text,
    messageId: email.messageId,
    headers: email.headers,
    attachments: outgoingAttachments(env.ATTACHMENTS, email.attachments),
  };
}

/** What a real server would answer, for mail queued with a test key (no SMTP is opened). */
async function attempt(
  email: EmailRecord,
  waiting: Recipient[],
  open: () => Promise<SmtpConnection>,
  env: Bindings,
): Promise<SmtpOutcome> {
  if (email.test) return simulatedOutcome(waiting.map((r) => r.address));
  const mail = await toOutgoingMail(email, waiting, env);
  return (await open()).send(mail);
}

type Settle = { result: AttemptResult; attempted: boolean };
type Claimed = Extract<DeliveryClaim, { kind: 'claimed' }>;

/**
 * The batch's SMTP connection: opened for the first mail that needs one, dropped after a transient failure
 * or a session out of step (the next mail opens a new one), closed when the batch is done.
 */
class BatchConnection {
  private connection: SmtpConnection | null = null;

  constructor(private readonly smtp: SmtpConfig) {}

  open = async (): Promise<SmtpConnection> => {
    this.connection ??= await SmtpConnection.open(this.smtp);
    return this.connection;
  };

  async after(outcome: SmtpOutcome): Promise<void> {
    if (this.connection && (outcome.kind === 'transient' || !this.connection.usable)) await this.close();
  }

  async close(): Promise<void> {
    await this.connection?.close();
    this.connection = null;
  }
}

/** One claimed email's attempt: the suppressed recipients skipped, the rest sent (or simulated for test keys). */
async function attemptClaimed(
  claim: Claimed,
  connection: BatchConnection,
  env: Bindings,
  retry: Config['retry'],
): Promise<Settle> {
  const { email } = claim;
  const skipped = skipSuppressed(claim.recipients, claim.suppressed);
  const waiting = skipped.recipients.filter((r) => r.status === 'QUEUED');
  if (waiting.length === 0) return { result: skipped, attempted: false };
  let outcome: SmtpOutcome;
  try {
    outcome = await attempt(email, waiting, connection.open, env);
  } catch (error) {
    outcome = classifySmtpError(error);
  }
  await connection.after(outcome);
  const result = settleAttempt(skipped.recipients, outcome, email.attempts + 1 >= retry.maxAttempts);
  // A test bounce does not put the address on the account's suppression list.
  const suppress = email.test ? [] : result.suppress;
  return { result: { ...result, suppress, events: [...skipped.events, ...result.events] }, attempted: true };
}

/**
 * Writes an attempt's outcome (one D1 round trip), then acks the message or puts it back for the retry,
 * and queues the webhook deliveries the outcome made.
 */
async function recordOutcome(
  env: Bindings,
  message: Message<unknown>,
  claim: Claimed,
  settle: Settle,
  lease: { owner: string; renewSeconds: number | null },
  retry: Config['retry'],
): Promise<void> {
  const { email } = claim;
  const attempts = email.attempts + (settle.attempted ? 1 : 0);
  const delaySeconds = retryDelaySeconds(attempts, retry.baseSeconds);
  const waitsAgain = settle.result.status === 'QUEUED';
  let deliveryIds: string[];
  try {
    deliveryIds = await recordAttempt(env.DB, {
      email,
      ...settle,
      retryAt: waitsAgain ? new Date(Date.now() + delaySeconds * 1000) : null,
      owner: lease.owner,
      renewLeaseSeconds: lease.renewSeconds,
      webhookEvents: emailAttemptEvents(email, claim.recipients, settle.result),
    });
  } catch (error) {
    // Not recorded: the lease keeps others off it until it runs out, then the message (or the sweep)
    // brings it back; a mail sent twice that way keeps its Message-ID.
    console.error('delivery outcome not recorded', email.id, error);
    message.retry({ delaySeconds: DELIVERY_LEASE_SECONDS });
    return;
  }
  if (waitsAgain) message.retry({ delaySeconds });
  else {
    message.ack();
    // Finished: its attachments are not needed any more (a failed delete leaves them to R2's lifecycle rule).
    await deleteAttachments(env.ATTACHMENTS, email.attachments).catch(() => undefined);
  }
  await queueDeliveries(env, deliveryIds);
}

/**
 * Delivers the email jobs of a batch over one SMTP connection. The batch starts with two D1 round trips
 * (settings, claims) and records each message in one more, started right after the server's answer and
 * running while the next message is sent; the message is then acked or retried on its own. A transient
 * failure drops the connection (its state is unknown).
 */
export async function deliverEmails(
  deliveries: Delivery<EmailJob>[],
  env: Bindings,
  smtp: SmtpConfig,
  retry: Config['retry'],
): Promise<void> {
  if (deliveries.length === 0) return;
  const [{ frozen }, { owner, claims }] = await Promise.all([
    getSettings(env.DB),
    claimForDelivery(
      env.DB,
      deliveries.map((d) => d.job.emailId),
      DELIVERY_LEASE_SECONDS,
    ),
  ]);
  const connection = new BatchConnection(smtp);
  const inThisBatch = new Set<string>();
  let leaseRenewedAt = Date.now();
  // The previous message's outcome being written while the next one is sent (at most one at a time).
  let recording: Promise<void> = Promise.resolve();
  try {
    for (const { message, job } of deliveries) {
      // Two messages of one email can share a batch (the scheduled handler's and the sweep's): one sends.
      if (inThisBatch.has(job.emailId)) {
        message.ack();
        continue;
      }
      inThisBatch.add(job.emailId);
      const claim = claims.get(job.emailId)!;
      // Queues deliver at least once: an email already finished, not due, or held, is done here.
      if (claim.kind === 'done' || claim.kind === 'held') {
        message.ack();
        continue;
      }
      if (claim.kind === 'busy') {
        message.retry({ delaySeconds: claim.retryInSeconds });
        continue;
      }
      if (frozen && claim.email.priority === 'NORMAL') {
        await holdEmail(env.DB, claim.email.id, owner);
        message.ack();
        continue;
      }
      const settle = await attemptClaimed(claim, connection, env, retry);
      const renewLease = Date.now() - leaseRenewedAt >= LEASE_RENEWAL_MS;
      if (renewLease) leaseRenewedAt = Date.now();
      const lease = { owner, renewSeconds: renewLease ? DELIVERY_LEASE_SECONDS : null };
      await recording;
      recording = recordOutcome(env, message, claim, settle, lease, retry);
    }
  } finally {
    await recording;
    await connection.close();
  }
}
