// An account's webhook endpoints: the rules the API's routes and the dashboard's forms share (the URL check, the
// limit, a new secret, the subscriptions cache), the test event and a manual retry.

import { config } from '../config';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { newId, newWebhookSecret } from '../ids';
import { checkOutboundUrl } from '../net/outbound-url';
import { accountStore } from '../store/account/client';
import type { WebhookDelivery } from '../store/account/webhook-deliveries';
import type { EndpointChanges, WebhookEndpoint } from '../store/account/webhooks';
import type { Scope } from '../store/control/credentials';
import { queueDeliveries } from './deliver';
import { type EventType, scopeOfEvent } from './events';
import { forgetSubscriptions } from './record';

export const webhookNotFound = () =>
  new ApiError('WEBHOOK_NOT_FOUND', 'webhookId: no such webhook endpoint for this account');

function checkedUrl(env: Bindings, url: string): string {
  const result = checkOutboundUrl(url, config(env).webhooks.allowInsecure);
  if (!result.ok) {
    throw new ApiError('INVALID_INPUT', `url: ${result.reason}`, {
      details: [{ path: 'url', message: result.reason }],
    });
  }
  return result.url;
}

/** 403 when an event needs a scope the key lacks (a key subscribes only to events of its scopes). */
export function checkEventScopes(scopes: Scope[], events: EventType[]) {
  const missing = events.find((event) => !scopes.includes(scopeOfEvent(event)));
  if (missing) {
    throw new ApiError('SCOPE_REQUIRED', `events: ${missing} needs an API key with scope ${scopeOfEvent(missing)}`);
  }
}

export async function ownEndpoint(env: Bindings, accountId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await accountStore(env, accountId).findEndpoint(accountId, id);
  if (!endpoint) throw webhookNotFound();
  return endpoint;
}

/** A new endpoint with its secret (shown to the caller once); 409 past the account's limit. */
export async function addEndpoint(
  env: Bindings,
  accountId: string,
  body: { url: string; events: EventType[]; description?: string },
): Promise<WebhookEndpoint> {
  const endpoint = await accountStore(env, accountId).createEndpoint({
    id: newId('whk'),
    accountId,
    url: checkedUrl(env, body.url),
    events: body.events,
    description: body.description ?? null,
    secret: newWebhookSecret(),
  });
  if (!endpoint) throw new ApiError('WEBHOOK_LIMIT_REACHED', 'An account has at most 20 webhook endpoints');
  forgetSubscriptions(accountId);
  return endpoint;
}

/** Changes an endpoint; `rotateSecret` issues a new secret, returned this once. */
export async function changeEndpoint(
  env: Bindings,
  accountId: string,
  id: string,
  body: Omit<EndpointChanges, 'secret'> & { rotateSecret?: true },
): Promise<{ endpoint: WebhookEndpoint; secret?: string }> {
  const secret = body.rotateSecret ? newWebhookSecret() : undefined;
  const endpoint = await accountStore(env, accountId).updateEndpoint(accountId, id, {
    ...(body.url === undefined ? {} : { url: checkedUrl(env, body.url) }),
    ...(body.events ? { events: body.events } : {}),
    ...(body.description === undefined ? {} : { description: body.description }),
    ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
    ...(secret ? { secret } : {}),
  });
  if (!endpoint) throw webhookNotFound();
  forgetSubscriptions(accountId);
  return { endpoint, ...(secret ? { secret } : {}) };
}

export async function removeEndpoint(env: Bindings, accountId: string, id: string): Promise<void> {
  if (!(await accountStore(env, accountId).deleteEndpoint(accountId, id))) throw webhookNotFound();
  forgetSubscriptions(accountId);
}

/** Queues a `webhook.test` delivery to the endpoint; its id. */
export async function sendTestEvent(env: Bindings, accountId: string, id: string): Promise<string> {
  const endpoint = await ownEndpoint(env, accountId, id);
  const deliveryId = await accountStore(env, accountId).insertTestDelivery(endpoint);
  await queueDeliveries(env, accountId, [deliveryId]);
  return deliveryId;
}

/** Delivers one of the endpoint's deliveries again now. */
export async function retryDelivery(
  env: Bindings,
  accountId: string,
  webhookId: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const endpoint = await ownEndpoint(env, accountId, webhookId);
  const delivery = await accountStore(env, accountId).resetDelivery(endpoint.id, deliveryId);
  if (!delivery) throw new ApiError('DELIVERY_NOT_FOUND', 'deliveryId: no such delivery for this endpoint');
  await queueDeliveries(env, accountId, [delivery.id]);
  return delivery;
}
