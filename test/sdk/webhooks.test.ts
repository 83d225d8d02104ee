// verifyWebhook (sdk/src/webhooks.ts) against signatures made the way postcode makes them (the standardwebhooks
// library the Worker uses): the event for a right signature, under one of two secrets while rotating; refused for a
// changed body, a wrong secret, an old timestamp or missing headers.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../sdk/src/index';

const SECRET = `whsec_${btoa('a secret of the endpoint, 32 bytes')}`;
const OTHER = `whsec_${btoa('the secret before it was rotated!')}`;
const event = { type: 'email.sent', createdAt: '2026-11-28T10:00:00.000Z', data: { emailId: 'em_x' } };
const body = JSON.stringify(event);

function signed(secret: string, at = new Date(), id = 'msg_1') {
  const signature = new Webhook(secret).sign(id, at, body);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

describe('verifyWebhook', () => {
  it('returns the typed event for a right signature, with headers as Headers or a plain object', async () => {
    const headers = signed(SECRET);
    const verified = await verifyWebhook(body, headers, SECRET);
    expect(verified).toEqual(event);
    expect(verified.type).toBe('email.sent');
    expect(await verifyWebhook(new TextEncoder().encode(body), new Headers(headers), SECRET)).toEqual(event);
  });

  it('takes either of two secrets while one is rotated', async () => {
    expect(await verifyWebhook(body, signed(OTHER), [SECRET, OTHER])).toEqual(event);
  });

  it('throws WebhookVerificationError for a changed body, another secret, an old timestamp, missing headers', async () => {
    const headers = signed(SECRET);
    const refusals = [
      verifyWebhook(body.replace('em_x', 'em_y'), headers, SECRET),
      verifyWebhook(body, headers, OTHER),
      verifyWebhook(body, signed(SECRET, new Date(Date.now() - 600_000)), SECRET),
      verifyWebhook(body, { 'webhook-id': 'msg_1' }, SECRET),
    ];
    for (const refusal of refusals) await expect(refusal).rejects.toBeInstanceOf(WebhookVerificationError);
    const late = signed(SECRET, new Date(Date.now() - 600_000));
    expect(await verifyWebhook(body, late, SECRET, { toleranceSeconds: 900 })).toEqual(event);
  });
});
