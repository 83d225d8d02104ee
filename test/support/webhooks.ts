// Webhook endpoints at the test receiver (test/support/node/webhook-receiver.ts), and what reached it.
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { call, eventually } from './api';

export type Webhook = {
  id: string;
  url: string;
  events: string[];
  description?: string;
  enabled: boolean;
  disabledReason?: string;
  secret?: string;
  createdAt: string;
  updatedAt: string;
};
export type WebhookDelivery = {
  id: string;
  eventType: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatus?: number;
  lastError?: string;
  lastResponse?: string;
};
export type Received = {
  webhookId: string;
  timestamp: string;
  signatureValid: boolean;
  payload: { type: string; createdAt: string; data: Record<string, unknown> };
  raw: string;
  answered: number | null;
};

export const receiverUrl = (key: string) => `${env.WEBHOOK_RECEIVER_URL}/hooks/${key}`;

/** Tells the receiver the secrets to verify with, and how to answer, for this key. */
export async function controlReceiver(
  key: string,
  control: { secrets?: string[]; mode?: string; failFirst?: number; body?: string },
) {
  await fetch(`${env.WEBHOOK_RECEIVER_URL}/control/${key}`, { method: 'PUT', body: JSON.stringify(control) });
}

export async function receivedAt(key: string): Promise<Received[]> {
  return (await (await fetch(`${env.WEBHOOK_RECEIVER_URL}/control/${key}`)).json()) as Received[];
}

/** Waits until deliveries of every wanted type have arrived (in any order). */
export async function waitForEvents(key: string, types: string[], timeoutMs = 20_000): Promise<Received[]> {
  return eventually(
    async () => {
      const received = await receivedAt(key);
      const seen = received.map((r) => r.payload.type);
      return types.every((t) => seen.includes(t)) ? received : undefined;
    },
    `${types.join(', ')} at ${key}`,
    timeoutMs,
  );
}

/** A new endpoint at a fresh receiver path; the receiver knows its secret. */
export async function newWebhook(token: string, events: string[]): Promise<{ key: string; webhook: Webhook }> {
  const key = crypto.randomUUID();
  const res = await call<Webhook>('POST', '/api/v1/webhooks', { token, body: { url: receiverUrl(key), events } });
  expect(res.status).toBe(201);
  await controlReceiver(key, { secrets: [res.json.data.secret!] });
  return { key, webhook: res.json.data };
}
