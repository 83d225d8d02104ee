// Events of facts kept outside the account's object (an OTP session, a domain, a sender): recorded there as
// deliveries for the endpoints subscribed to them, and queued.
import type { Bindings } from '../env';
import { IsolateCache } from '../isolate-cache';
import { accountStore } from '../store/account/client';
import { queueDeliveries } from './deliver';
import type { WebhookEvent } from './events';

/**
 * The event types an account's enabled endpoints want, kept in the isolate: most OTP sends produce an event
 * nobody subscribed to, and then cost no call to the account's object. Changing an endpoint drops the entry in the isolate
 * that changed it; other isolates see a new subscription within the cache's TTL (see docs/webhooks.md).
 */
const subscriptions = new IsolateCache<Set<string>>();

/** After an endpoint was created or changed: this isolate reads the account's subscriptions again. */
export const forgetSubscriptions = (accountId: string) => subscriptions.forget(accountId);

/** Records events of a fact that lives outside the account's object (an OTP session) and queues their deliveries. */
export async function recordEvents(env: Bindings, accountId: string, events: WebhookEvent[]): Promise<void> {
  const store = accountStore(env, accountId);
  const wanted = await subscriptions.get(accountId, () => store.subscribedEventTypes(accountId));
  const subscribed = events.filter((event) => wanted.has(event.type));
  if (subscribed.length === 0) return;
  const ids = await store.recordWebhookEvents(accountId, subscribed, Date.now());
  await queueDeliveries(env, accountId, ids);
}
