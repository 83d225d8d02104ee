// A listening session's object, and a delivery to it (what `deliver.ts` does instead of a POST for such an
// endpoint).
import type { ListenerAnswer, ListenerDelivery } from '../durable-objects/webhook-listener';
import type { Bindings } from '../env';

/** The URL a listening session's endpoint carries: deliveries to it go to its object, never to the network. */
export const LISTENER_URL_PREFIX = 'listen:';

export const listenerObject = (env: Pick<Bindings, 'WEBHOOK_LISTENER'>, listenerId: string) =>
  env.WEBHOOK_LISTENER.get(env.WEBHOOK_LISTENER.idFromName(listenerId));

/** One delivery to a listening session (its endpoint's URL names it). */
export function deliverToListener(env: Bindings, url: string, delivery: ListenerDelivery): Promise<ListenerAnswer> {
  return listenerObject(env, url.slice(LISTENER_URL_PREFIX.length)).deliver(delivery);
}
