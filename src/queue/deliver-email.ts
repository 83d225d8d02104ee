// Email jobs: a batch of queued emails delivered through the delivery routes (one SMTP connection per relay
// for the batch), each recorded as soon as a route has answered it.
import type { Config, MailRoute } from '../config';
import type { Bindings } from '../env';
import { outgoingAttachments } from '../mail/attachments';
import { type EmailBody, readBody } from '../mail/bodies';
import { senderIdentity } from '../mail/domains';
import { type AttemptResult, type Recipient, settleAttempt, skipSuppressed } from '../mail/outcome';
import type { OutgoingMail } from '../mail/outgoing';
import { BatchRoutes, type Probed, type RouteOutcome } from '../mail/routes/send';
import { classifySmtpError } from '../mail/smtp/connection';
import { simulatedOutcome } from '../mail/test-mode';
import { type AccountStore, accountStore } from '../store/account/client';
import type { DeliveryClaim } from '../store/account/delivery';
import type { EmailRecord } from '../store/account/emails';
import { getSettings } from '../store/control/settings';
import { bucketsOf } from '../store/placement';
import { emailAttemptEvents } from '../webhooks/produce';
import type { Delivery, EmailJob } from './jobs';
import { type Outcome, OutcomeWriter } from './record-outcomes';
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
async function toOutgoingMail(
  email: EmailRecord,
  waiting: Recipient[],
  env: Bindings,
  kept: EmailBody | undefined,
): Promise<OutgoingMail> {
  const buckets = await bucketsOf(env, email.accountId);
  const [{ html, text }, identity] = await Promise.all([
    kept ?? readBody(buckets.bodies, email.id),
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
    attachments: outgoingAttachments(buckets.attachments, email.attachments),
  };
}

/** Through the routes; for mail queued with a test key, what a real server would answer (nothing is sent). */
async function attempt(
  email: EmailRecord,
  waiting: Recipient[],
  routes: BatchRoutes,
  env: Bindings,
  body: EmailBody | undefined,
) {
  if (email.test) return { ...simulatedOutcome(waiting.map((r) => r.address)), route: null, failovers: [] };
  return routes.send(await toOutgoingMail(email, waiting, env, body), email.attempts > 0);
}

type Settle = { result: AttemptResult; attempted: boolean };
type Claimed = Extract<DeliveryClaim, { kind: 'claimed' }>;

/** One claimed email's attempt: the suppressed recipients skipped, the rest sent (or simulated for test keys). */
async function attemptClaimed(
  claim: Claimed,
  routes: BatchRoutes,
  env: Bindings,
  retry: Config['retry'],
  body: EmailBody | undefined,
): Promise<Settle> {
  const { email } = claim;
  const skipped = skipSuppressed(claim.recipients, claim.suppressed);
  const waiting = skipped.recipients.filter((r) => r.status === 'QUEUED');
  if (waiting.length === 0) return { result: skipped, attempted: false };
  let outcome: RouteOutcome;
  try {
    outcome = await attempt(email, waiting, routes, env, body);
  } catch (error) {
    // The message could not be put together (its body gone from R2: a 554 it names).
    outcome = { ...classifySmtpError(error), route: null, failovers: [] };
  }
  const result = settleAttempt(skipped.recipients, outcome, email.attempts + 1 >= retry.maxAttempts);
  // A test bounce does not put the address on the account's suppression list.
  const suppress = email.test ? [] : result.suppress;
  return { result: { ...result, suppress, events: [...skipped.events, ...result.events] }, attempted: true };
}

/** What is written of an attempt, and what becomes of its message once it is. */
function outcomeOf(
  message: Message<unknown>,
  claim: Claimed,
  settle: Settle,
  lease: { owner: string; renewSeconds: number | null },
  retry: Config['retry'],
): Outcome {
  const { email } = claim;
  const attempts = email.attempts + (settle.attempted ? 1 : 0);
  const delaySeconds = retryDelaySeconds(attempts, retry.baseSeconds);
  const waitsAgain = settle.result.status === 'QUEUED';
  return {
    message,
    email,
    record: {
      email: { id: email.id, accountId: email.accountId },
      ...settle,
      retryAt: waitsAgain ? new Date(Date.now() + delaySeconds * 1000) : null,
      owner: lease.owner,
      renewLeaseSeconds: lease.renewSeconds,
      webhookEvents: emailAttemptEvents(email, claim.recipients, settle.result),
    },
    retryInSeconds: waitsAgain ? delaySeconds : null,
    providerIds: settle.result.recipients.flatMap((r) => (r.providerId ? [r.providerId] : [])),
  };
}

type AccountClaims = {
  store: AccountStore;
  owner: string;
  claims: Map<string, DeliveryClaim>;
  /** Bodies the object still keeps (not yet moved to R2). */
  bodies: Record<string, EmailBody>;
};

/** Each account's emails of the batch, claimed in one call to its object (the accounts at once). */
async function claimByAccount(deliveries: Delivery<EmailJob>[], env: Bindings): Promise<Map<string, AccountClaims>> {
  const ids = new Map<string, string[]>();
  for (const { job } of deliveries) ids.set(job.accountId, [...(ids.get(job.accountId) ?? []), job.emailId]);
  const claimed = await Promise.all(
    [...ids].map(async ([accountId, emailIds]) => {
      const store = accountStore(env, accountId);
      const { owner, claims, bodies } = await store.claimForDelivery(emailIds, DELIVERY_LEASE_SECONDS);
      return [accountId, { store, owner, claims, bodies }] as const;
    }),
  );
  return new Map(claimed);
}

/**
 * Delivers the email jobs of a batch through the routes. The batch starts with the settings (read from D1, so
 * that mail released by an unfreeze is not held again by a stale copy) and one claim per account in it (its
 * object, the accounts at once). Outcomes are written while the next mails are sent (`OutcomeWriter`: those
 * that come in during a write go in the next call together); each message is then acked or retried on its own. A transient failure drops that relay's connection (its state is unknown).
 * `probed`: the routes the batch's retries already probed past an open breaker.
 */
export async function deliverEmails(
  deliveries: Delivery<EmailJob>[],
  env: Bindings,
  mailRoutes: MailRoute[],
  retry: Config['retry'],
  probed?: Probed,
): Promise<void> {
  if (deliveries.length === 0) return;
  const [{ frozen }, accounts] = await Promise.all([getSettings(env.DB), claimByAccount(deliveries, env)]);
  const routes = new BatchRoutes(env, mailRoutes, probed);
  const inThisBatch = new Set<string>();
  let leaseRenewedAt = Date.now();
  // Outcomes are written while the next mails are sent.
  const outcomes = new OutcomeWriter(env, DELIVERY_LEASE_SECONDS);
  try {
    for (const { message, job } of deliveries) {
      // Two messages of one email can share a batch (the dispatch's and the alarm's recovery): one sends.
      if (inThisBatch.has(job.emailId)) {
        message.ack();
        continue;
      }
      inThisBatch.add(job.emailId);
      const { store, owner, claims, bodies } = accounts.get(job.accountId)!;
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
        await store.holdEmail(claim.email.id, owner);
        message.ack();
        continue;
      }
      const settle = await attemptClaimed(claim, routes, env, retry, bodies[claim.email.id]);
      const renewLease = Date.now() - leaseRenewedAt >= LEASE_RENEWAL_MS;
      if (renewLease) {
        leaseRenewedAt = Date.now();
        // This account's lease is renewed with the outcome; the batch's other accounts' here.
        await Promise.all(
          [...accounts]
            .filter(([accountId]) => accountId !== job.accountId)
            .map(([, other]) => other.store.renewLease(other.owner, DELIVERY_LEASE_SECONDS)),
        );
      }
      const lease = { owner, renewSeconds: renewLease ? DELIVERY_LEASE_SECONDS : null };
      outcomes.add(store, outcomeOf(message, claim, settle, lease, retry));
    }
  } finally {
    await outcomes.drained();
    await routes.close();
  }
}
