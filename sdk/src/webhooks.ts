// Standard Webhooks verification (what postcode signs with): the HMAC-SHA256 of `id.timestamp.body` under the
// endpoint's `whsec_…` secret, one of the `v1,` signatures in `webhook-signature`, within a timestamp tolerance.
import type { WebhookEvent } from './types.js';

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export type VerifyOptions = {
  /** Seconds a delivery's timestamp may be from now, either way (default 300). */
  toleranceSeconds?: number;
  /** The time to check against (tests). */
  now?: Date;
};

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  const value = entry?.[1];
  return Array.isArray(value) ? value[0] : value;
}

const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** Compares without an early exit, so the time taken does not tell how much matched. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

async function signatureOf(secret: string, content: string): Promise<string> {
  const raw = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  let keyBytes: Uint8Array<ArrayBuffer>;
  try {
    keyBytes = fromBase64(raw);
  } catch {
    throw new WebhookVerificationError('the secret is not a whsec_ secret');
  }
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(content))));
}

/**
 * The event of a delivery whose signature one of `secrets` (two while one is rotated) made, and whose timestamp is
 * within the tolerance; throws WebhookVerificationError otherwise. `rawBody` is the body exactly as received.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeaderSource,
  secrets: string | string[],
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  }
  const seconds = Number(timestamp);
  const now = (options.now ?? new Date()).getTime() / 1000;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('the timestamp is missing or too far from now');
  }
  const offered = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  for (const secret of Array.isArray(secrets) ? secrets : [secrets]) {
    const expected = await signatureOf(secret, `${id}.${timestamp}.${body}`);
    if (offered.some((signature) => sameText(signature, expected))) return JSON.parse(body) as WebhookEvent;
  }
  throw new WebhookVerificationError('no signature matches');
}
