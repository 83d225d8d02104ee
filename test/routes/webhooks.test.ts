// The webhook endpoint routes: /api/v1/webhooks, /{webhookId}, /test, /deliveries, /deliveries/{id}/retry.
import { describe, expect, it } from 'vitest';
import { call, expectError, fetchWith, newAccount } from '../support/api';
import { newWebhook, receiverUrl, type Webhook, type WebhookDelivery, waitForEvents } from '../support/webhooks';

const create = (token: string, body: object) => call<Webhook>('POST', '/api/v1/webhooks', { token, body });

describe('POST /api/v1/webhooks', () => {
  it('creates an endpoint and shows its whsec_ secret once', async () => {
    const { mailKey } = await newAccount();
    const res = await create(mailKey, { url: receiverUrl('a'), events: ['email.sent'], description: 'ops' });
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({
      id: expect.stringMatching(/^whk_/),
      url: receiverUrl('a'),
      events: ['email.sent'],
      description: 'ops',
      enabled: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const listed = await call<{ webhooks: Webhook[] }>('GET', '/api/v1/webhooks', { token: mailKey });
    expect(listed.json.data.webhooks).toHaveLength(1);
    expect(listed.json.data.webhooks[0]!.secret).toBeUndefined();
    expect(JSON.stringify(listed.json)).not.toContain('whsec_');
  });

  it('a key subscribes only to events of its scopes: 403 SCOPE_REQUIRED otherwise', async () => {
    const { mailKey, serverKey, bothKey } = await newAccount();
    expectError(await create(mailKey, { url: receiverUrl('s'), events: ['otp.sent'] }), 403, 'SCOPE_REQUIRED');
    expectError(await create(serverKey, { url: receiverUrl('s'), events: ['email.sent'] }), 403, 'SCOPE_REQUIRED');
    expect((await create(bothKey, { url: receiverUrl('s'), events: ['email.sent', 'otp.verified'] })).status).toBe(201);
  });

  it('refuses URLs that are not public https (without WEBHOOK_ALLOW_INSECURE), carry credentials or are too long', async () => {
    const { mailKey } = await newAccount();
    const strict = { WEBHOOK_ALLOW_INSECURE: 'false' };
    const post = (url: string, vars: object = strict) =>
      fetchWith(vars, 'POST', '/api/v1/webhooks', { token: mailKey, body: { url, events: ['email.sent'] } });
    for (const url of [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://localhost/x',
      'https://localhost./x',
      'https://LocalHost.:8443/x',
      'https://api.localhost/x',
      'https://printer.local./x',
      'https://metadata.google.internal/x',
      'https://nas.home.arpa/x',
      'https://intranet/x',
      'https://10.1.2.3/x',
      'https://192.168.0.10/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/x',
      'https://[fe80::1]/x',
      'https://[::ffff:10.0.0.1]/x',
      'https://0x7f.1/x',
      'https://user:pass@hooks.example.com/x',
      `https://hooks.example.com/${'x'.repeat(2040)}`,
      'ftp://hooks.example.com/x',
      'not a url',
    ]) {
      expectError(await post(url), 400, 'INVALID_INPUT');
    }
    expect((await post('https://hooks.example.com/postcode')).status).toBe(201);
    // Local development: http and loopback, still never credentials or private ranges.
    expect((await post('http://127.0.0.1:9/x', {})).status).toBe(201);
    expectError(await post('http://10.0.0.1/x', {}), 400, 'INVALID_INPUT');
  });

  it('409 WEBHOOK_LIMIT_REACHED past 20 endpoints', async () => {
    const { mailKey } = await newAccount();
    for (let i = 0; i < 20; i++) {
      expect((await create(mailKey, { url: receiverUrl(`n${i}`), events: ['email.sent'] })).status).toBe(201);
    }
    expectError(
      await create(mailKey, { url: receiverUrl('n20'), events: ['email.sent'] }),
      409,
      'WEBHOOK_LIMIT_REACHED',
    );
  });

  it('400 INVALID_INPUT for unknown or repeated events, no events, and unknown fields', async () => {
    const { mailKey } = await newAccount();
    for (const body of [
      { url: receiverUrl('v'), events: ['email.opened'] },
      { url: receiverUrl('v'), events: ['email.sent', 'email.sent'] },
      { url: receiverUrl('v'), events: [] },
      { url: receiverUrl('v'), events: ['email.sent'], secret: 'mine' },
    ]) {
      expectError(await create(mailKey, body), 400, 'INVALID_INPUT');
    }
  });
});

describe('GET, PATCH, DELETE /api/v1/webhooks/{webhookId}', () => {
  it("another account's endpoint is 404 WEBHOOK_NOT_FOUND for every route", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const { webhook } = await newWebhook(owner.mailKey, ['email.sent']);
    const token = stranger.mailKey;
    expectError(await call('GET', `/api/v1/webhooks/${webhook.id}`, { token }), 404, 'WEBHOOK_NOT_FOUND');
    expectError(
      await call('PATCH', `/api/v1/webhooks/${webhook.id}`, { token, body: { enabled: false } }),
      404,
      'WEBHOOK_NOT_FOUND',
    );
    expectError(await call('POST', `/api/v1/webhooks/${webhook.id}/test`, { token }), 404, 'WEBHOOK_NOT_FOUND');
    expectError(await call('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token }), 404, 'WEBHOOK_NOT_FOUND');
    expectError(await call('DELETE', `/api/v1/webhooks/${webhook.id}`, { token }), 404, 'WEBHOOK_NOT_FOUND');
    expect((await call('GET', `/api/v1/webhooks/${webhook.id}`, { token: owner.mailKey })).status).toBe(200);
  });

  it('PATCH changes events, url and description; disabled endpoints get nothing', async () => {
    const { mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.sent']);
    const patched = await call<Webhook>('PATCH', `/api/v1/webhooks/${webhook.id}`, {
      token: mailKey,
      body: { events: ['email.queued'], description: null, enabled: false },
    });
    expect(patched.json.data).toMatchObject({ events: ['email.queued'], enabled: false });
    expect(patched.json.data.description).toBeUndefined();
    expect(patched.json.data.secret).toBeUndefined();
    expectError(
      await call('PATCH', `/api/v1/webhooks/${webhook.id}`, { token: mailKey, body: { events: ['otp.sent'] } }),
      403,
      'SCOPE_REQUIRED',
    );
    expectError(
      await call('PATCH', `/api/v1/webhooks/${webhook.id}`, { token: mailKey, body: {} }),
      400,
      'INVALID_INPUT',
    );
    await call('POST', '/api/v1/emails', { token: mailKey, body: { to: 'off@example.com', subject: 's', text: 'x' } });
    await call('PATCH', `/api/v1/webhooks/${webhook.id}`, { token: mailKey, body: { enabled: true } });
    await call('POST', '/api/v1/emails', { token: mailKey, body: { to: 'on@example.com', subject: 's', text: 'x' } });
    const received = await waitForEvents(key, ['email.queued']);
    expect(received.map((r) => (r.payload.data.to as string[])[0])).toEqual(['on@example.com']);
  });

  it('DELETE removes the endpoint and its log', async () => {
    const { mailKey } = await newAccount();
    const { webhook } = await newWebhook(mailKey, ['email.sent']);
    const res = await call('DELETE', `/api/v1/webhooks/${webhook.id}`, { token: mailKey });
    expect(res.json).toEqual({ success: true, data: { id: webhook.id, deleted: true } });
    expectError(await call('GET', `/api/v1/webhooks/${webhook.id}`, { token: mailKey }), 404, 'WEBHOOK_NOT_FOUND');
  });
});

describe('POST /test, GET /deliveries, POST /deliveries/{deliveryId}/retry', () => {
  it('a test event is delivered and logged; a retry delivers it again with the same webhook-id', async () => {
    const { mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.sent']);
    const test = await call<WebhookDelivery>('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: mailKey });
    expect(test.json.data).toMatchObject({ eventType: 'webhook.test', status: 'pending', attempts: 0 });
    const [first] = await waitForEvents(key, ['webhook.test']);
    expect(first).toMatchObject({ webhookId: test.json.data.id, signatureValid: true });
    expect(first!.payload.data).toEqual({ webhookId: webhook.id });

    const retried = await call<WebhookDelivery>(
      'POST',
      `/api/v1/webhooks/${webhook.id}/deliveries/${test.json.data.id}/retry`,
      { token: mailKey },
    );
    expect(retried.json.data).toMatchObject({ id: test.json.data.id, status: 'pending' });
    const log = await waitForDelivered(mailKey, webhook.id, 2);
    expect(log).toMatchObject({ id: test.json.data.id, status: 'delivered', attempts: 2, lastStatus: 204 });
    expectError(
      await call('POST', `/api/v1/webhooks/${webhook.id}/deliveries/msg_unknown/retry`, { token: mailKey }),
      404,
      'DELIVERY_NOT_FOUND',
    );
  });
});

async function waitForDelivered(token: string, webhookId: string, attempts: number): Promise<WebhookDelivery> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const log = await call<{ deliveries: WebhookDelivery[] }>('GET', `/api/v1/webhooks/${webhookId}/deliveries`, {
      token,
    });
    const first = log.json.data.deliveries[0];
    if (first?.status === 'delivered' && first.attempts >= attempts) return first;
    if (Date.now() > deadline) throw new Error(`delivery not delivered ${attempts} times: ${JSON.stringify(first)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
