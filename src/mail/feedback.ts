// Applying what comes back after the relay, whoever reports it: the recipient it names is found, the rule
// (delivery-events.ts) decides, and the change is written with its timeline entry, suppression and webhooks.
// A report about a send not recorded yet goes on the event queue and is applied again a little later.
import { config } from '../config';
import type { Bindings } from '../env';
import { accountStore } from '../store/account/client';
import { accountOfEmailId, accountOfProviderId } from '../store/directory';
import { queueDeliveries } from '../webhooks/deliver';
import { deliveryReportEvents } from '../webhooks/produce';
import { canonicalAddress, parseMailbox } from './address';
import { changeOf, type DeliveryEvent } from './delivery-events';
import { emailStatusOf } from './outcome';

export type ApplyResult = 'applied' | 'wait' | 'ignored';

/** A report applied again from the event queue (see `applyOrRequeue`). */
export type QueuedDeliveryEvent = { kind: 'delivery-event'; event: DeliveryEvent };

/** Seconds before a report about a send not recorded yet is applied again. */
export const REPORT_RETRY_SECONDS = 10;

const DAY_MS = 86_400_000;

export async function applyDeliveryEvent(env: Bindings, event: DeliveryEvent): Promise<ApplyResult> {
  const mailbox = parseMailbox(event.recipient);
  if (!mailbox) return 'ignored';
  // A provider's message id may name a send whose answer is not stored yet; an email id is stored first.
  const notFound = 'providerId' in event.target ? 'wait' : 'ignored';
  const accountId =
    'emailId' in event.target
      ? await accountOfEmailId(env, event.target.emailId)
      : await accountOfProviderId(env, event.target.providerId);
  if (accountId === null) return notFound;
  const store = accountStore(env, accountId);
  const found = await store.findEventRecipient(event.target, canonicalAddress(mailbox.email));
  if (!found) return notFound;
  const change = changeOf(found, event);
  if (change === 'wait') return 'wait';
  if (change === 'ignore') return 'ignored';
  const { email } = found;
  const route = event.route ?? found.route;
  const { hardBounceDays } = config(env).feedback;
  const suppressUntil =
    change.suppress === 'hard_bounce' && hardBounceDays > 0 ? Date.now() + hardBounceDays * DAY_MS : null;
  const addsSuppression = change.suppress !== null && !email.test && !found.suppressed;
  const status = emailStatusOf(
    found.statuses.map(([position, each]) => ({ status: position === found.position ? change.status : each })),
  );
  const { bounceType, bounceReason } = change;
  const report = { recipient: found.address, route, bounceType, bounceReason, diagnostic: event.diagnostic };
  const suppression = addsSuppression
    ? {
        email: found.canonical,
        reason: change.suppress!,
        emailId: email.id,
        expiresAt: suppressUntil === null ? null : new Date(suppressUntil).toISOString(),
      }
    : null;
  const detail = event.diagnostic ? `${found.address}: ${event.diagnostic}` : found.address;
  const deliveryIds = await store.applyRecipientChange({
    recipient: found,
    event: { ...event, route },
    change,
    timeline: { type: change.timeline, detail, route },
    webhookEvents: deliveryReportEvents(email, change.webhook, status, report, suppression),
    suppressUntil,
  });
  await queueDeliveries(env, accountId, deliveryIds);
  return 'applied';
}

/** Applies a report now, or puts it on the event queue when the send it names is not recorded yet. */
export async function applyOrRequeue(env: Bindings, event: DeliveryEvent): Promise<ApplyResult> {
  const result = await applyDeliveryEvent(env, event);
  if (result === 'wait') {
    const message: QueuedDeliveryEvent = { kind: 'delivery-event', event };
    await env.EVENT_QUEUE.send(message, { contentType: 'json', delaySeconds: REPORT_RETRY_SECONDS });
  }
  return result;
}
