// Listening sessions (`postcode webhooks listen`): the account's events delivered into a WebSocket the CLI holds,
// signed as for an endpoint, instead of to a URL the Worker would call. See WebhookListener.
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { newId, newWebhookSecret } from '../ids';
import { MAX_LISTENERS_PER_ACCOUNT } from '../store/account/webhooks';
import type { EventType } from './events';
import { listenerObject } from './listener-object';
import { forgetSubscriptions } from './record';

/** How long a new session waits for its connection. */
export const CONNECT_WITHIN_SECONDS = 60;

export const listenerNotFound = () =>
  new ApiError('LISTENER_NOT_FOUND', 'listenerId: no such listening session waiting for its connection');

/** A session that waits `CONNECT_WITHIN_SECONDS` for its WebSocket; its secret is shown this once. */
export async function openListener(env: Bindings, accountId: string, events: EventType[], origin: URL) {
  const listenerId = newId('lsn');
  const secret = newWebhookSecret();
  const connectBy = Date.now() + CONNECT_WITHIN_SECONDS * 1000;
  await listenerObject(env, listenerId).open({ listenerId, accountId, events, secret, connectBy });
  const connectUrl = new URL(`/api/v1/webhook-listeners/${listenerId}`, origin);
  connectUrl.protocol = origin.protocol === 'http:' ? 'ws:' : 'wss:';
  return { listenerId, secret, events, connectUrl: connectUrl.href, connectBy: new Date(connectBy).toISOString() };
}

/** Hands the WebSocket upgrade to the session's object, which registers it with the account. */
export async function connectListener(
  env: Bindings,
  accountId: string,
  listenerId: string,
  request: Request,
): Promise<Response> {
  const listener = listenerObject(env, listenerId);
  if (!(await listener.waiting(accountId))) throw listenerNotFound();
  const headers = new Headers(request.headers);
  headers.set('x-postcode-account', accountId);
  const answer = await listener.fetch(request.url, { headers });
  if (answer.status === 409) {
    throw new ApiError(
      'WEBHOOK_LIMIT_REACHED',
      `An account has at most ${MAX_LISTENERS_PER_ACCOUNT} listening sessions connected at once`,
    );
  }
  if (answer.status !== 101) throw listenerNotFound();
  forgetSubscriptions(accountId);
  // The object's answer has immutable headers; the app adds its own (X-Request-Id).
  return new Response(null, { status: 101, headers: new Headers(answer.headers), webSocket: answer.webSocket });
}
