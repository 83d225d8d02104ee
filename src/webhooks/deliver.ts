// Webhook delivery: one signed POST per attempt (Standard Webhooks: webhook-id, webhook-timestamp,
// webhook-signature), 2xx = delivered, growing delays between attempts, then `failed`.
import { Webhook } from 'standardwebhooks';
import type { Config } from '../config';
import type { Bindings } from '../env';
import type { Delivery, WebhookJob } from '../queue/jobs';
import { accountStore } from '../store/account/client';
import type { AccountSql } from '../store/account/object-sql';
import { type ClaimedDelivery, claimOverdueDeliveries } from '../store/account/webhook-deliveries';
import { deliverToListener, LISTENER_URL_PREFIX } from './listener-object';

const TIMEOUT_MS = 10_000;
/** The lease covers one POST (10 s timeout) and its record. */
const LEASE_SECONDS = 30;
/**
 * Delays after the 1st, 2nd, … failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then 12 h (a queue's
 * longest delay); after the 8th attempt the delivery is `failed`.
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 43_200];

export const webhookJob = (accountId: string, deliveryId: string): WebhookJob => ({
  kind: 'webhook',
  accountId,
  deliveryId,
});

/**
 * Queues deliveries just recorded in the account's object. A failure here loses nothing: the object's alarm
 * queues pending rows again.
 */
export async function queueDeliveries(env: Bindings, accountId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  try {
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100);
      await env.WEBHOOK_QUEUE.sendBatch(
        chunk.map((id) => ({ body: webhookJob(accountId, id), contentType: 'json' as const })),
      );
    }
  } catch (error) {
    console.error('webhook deliveries not queued (the account alarm will)', error);
  }
}

/** The account alarm's part for webhooks: pending deliveries whose queue message was lost are queued again. */
export async function recoverOverdueDeliveries(
  env: Bindings,
  db: AccountSql,
  accountId: string,
  graceSeconds: number,
): Promise<number> {
  const ids = await claimOverdueDeliveries(db, graceSeconds, 1_000);
  await queueDeliveries(env, accountId, ids);
  return ids.length;
}

/** How much of an answer's body the delivery log keeps. */
const RESPONSE_KEEP_BYTES = 2_048;

type Answer = { httpStatus: number | null; error: string | null; response: string | null };

/**
 * The first RESPONSE_KEEP_BYTES of a body as text (a character cut at the end is left out), then the rest
 * is cancelled; what arrived before a failure is kept.
 */
async function startOfBody(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let left = RESPONSE_KEEP_BYTES;
  try {
    while (left > 0) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      const part = value.byteLength > left ? value.subarray(0, left) : value;
      text += decoder.decode(part, { stream: true });
      left -= part.byteLength;
    }
  } catch {
    // the answer broke off or timed out while its body was read: its status still counts
  }
  await reader.cancel().catch(() => {});
  return text;
}

async function post(env: Bindings, delivery: ClaimedDelivery): Promise<Answer> {
  const sentAt = new Date();
  const signature = new Webhook(delivery.secret).sign(delivery.id, sentAt, delivery.payload);
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': 'postcode-webhooks/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': signature,
  };
  if (delivery.url.startsWith(LISTENER_URL_PREFIX)) {
    return deliverToListener(env, delivery.url, { id: delivery.id, headers, body: delivery.payload });
  }
  try {
    const res = await fetch(delivery.url, {
      method: 'POST',
      headers,
      body: delivery.payload,
      redirect: 'manual', // a redirect could lead anywhere: it counts as a failure
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const response = await startOfBody(res);
    return { httpStatus: res.status, error: res.ok ? null : `HTTP ${res.status}`, response };
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    return {
      httpStatus: null,
      response: null,
      error: timedOut ? `no answer within ${TIMEOUT_MS / 1000} s` : String(error).slice(0, 300),
    };
  }
}

/** Delivers each message's delivery (in parallel: one slow endpoint does not hold up the others). */
export async function deliverWebhooks(
  deliveries: Delivery<WebhookJob>[],
  env: Bindings,
  settings: Config['webhooks'],
): Promise<void> {
  await Promise.all(
    deliveries.map(async ({ message, job }) => {
      const store = accountStore(env, job.accountId);
      const delivery = await store.claimDelivery(job.deliveryId, LEASE_SECONDS);
      if (!delivery) return message.ack(); // done, not due, leased elsewhere, or its endpoint is off
      const answer = await post(env, delivery);
      const delivered = answer.error === null;
      const delay = RETRY_DELAYS_SECONDS[delivery.attempts];
      const outcome = delivered ? 'delivered' : delay === undefined ? 'failed' : 'pending';
      const failingSince = Date.parse(delivery.failingSince ?? new Date().toISOString());
      const tooLong = !delivered && Date.now() - failingSince >= settings.disableAfterDays * 86_400_000;
      await store.recordDeliveryAttempt({
        delivery,
        ...answer,
        outcome,
        retryAt: outcome === 'pending' ? new Date(Date.now() + delay! * 1000) : null,
        disableReason: tooLong
          ? `every delivery failed since ${delivery.failingSince} (${settings.disableAfterDays} days)`
          : null,
      });
      if (outcome === 'pending') message.retry({ delaySeconds: delay! });
      else message.ack();
    }),
  );
}
