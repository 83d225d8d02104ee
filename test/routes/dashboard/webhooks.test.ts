// Webhooks in the dashboard: endpoints created (secret shown once) and changed with the API's rules, a test event
// signed with the secret, a rotated secret, the delivery log with the request and the answer, a retry.
import { describe, expect, it } from 'vitest';
import { call } from '../../support/api';
import { mailKey, signedInMember } from '../../support/dashboard';
import { controlReceiver, receivedAt, receiverUrl, waitForEvents } from '../../support/webhooks';

const secretIn = (html: string) => /Signing secret<input class="secret" readonly="" value="([^"]+)"/.exec(html)?.[1];

async function endpointWithReceiver(browser: Awaited<ReturnType<typeof signedInMember>>['browser']) {
  const key = crypto.randomUUID();
  const res = await browser.request('POST', '/dashboard/webhooks', {
    body: new URLSearchParams([
      ['url', receiverUrl(key)],
      ['events', 'email.sent'],
      ['events', 'otp.verified'],
      ['description', 'Receiver'],
      ['csrf', await browser.csrf()],
    ]).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: browser.origin },
  });
  expect(res.status, res.text).toBe(201);
  const secret = secretIn(res.text)!;
  expect(secret).toMatch(/^whsec_/);
  await controlReceiver(key, { secrets: [secret] });
  const id = /href="\/dashboard\/webhooks\/(whk_[a-z2-7]+)"/.exec(res.text)![1]!;
  return { key, id, secret };
}

describe('POST /dashboard/webhooks', () => {
  it('a developer adds an endpoint for any event (no key scopes apply); the API lists it, without the secret', async () => {
    const { browser, accountId } = await signedInMember('developer');
    const { id, secret } = await endpointWithReceiver(browser);
    const listed = await call<{ webhooks: { id: string; events: string[] }[] }>('GET', '/api/v1/webhooks', {
      token: await mailKey(accountId),
    });
    expect(listed.json.data.webhooks).toEqual([
      expect.objectContaining({ id, events: ['email.sent', 'otp.verified'] }),
    ]);
    const page = await browser.get(`/dashboard/webhooks/${id}`);
    expect(page.text).not.toContain(secret);
  });

  it("400 on the page for the API's rules: no event, an unsafe URL", async () => {
    const { browser } = await signedInMember('owner');
    const none = await browser.post('/dashboard/webhooks', { url: 'https://hooks.example.com/x' });
    expect(none.status).toBe(400);
    expect(none.text).toContain('events:');
    const local = await browser.post('/dashboard/webhooks', { url: 'ftp://hooks.example.com/x', events: 'email.sent' });
    expect(local.status).toBe(400);
    expect(local.text).toContain('url:');
  });
});

describe('POST /dashboard/webhooks/{id}/test, /rotate, /deliveries/{deliveryId}/retry', () => {
  it('a test event arrives signed; after a rotation the new secret signs; the log shows the request and the answer; a retry sends again', async () => {
    const { browser } = await signedInMember('owner');
    const { key, id } = await endpointWithReceiver(browser);
    await controlReceiver(key, { body: '<b>received</b>' });
    expect((await browser.post(`/dashboard/webhooks/${id}/test`)).status).toBe(303);
    const [first] = await waitForEvents(key, ['webhook.test']);
    expect(first!.signatureValid).toBe(true);
    const rotated = await browser.post(`/dashboard/webhooks/${id}/rotate`);
    expect(rotated.status).toBe(200);
    const newSecret = secretIn(rotated.text)!;
    await controlReceiver(key, { secrets: [newSecret] });
    const page = await browser.get(`/dashboard/webhooks/${id}`);
    expect(page.text).toContain('webhook.test');
    expect(page.text).toContain('&quot;type&quot;: &quot;webhook.test&quot;');
    const deliveryId = /\/deliveries\/(msg_[A-Za-z0-9]+)\/retry/.exec(page.text)![1]!;
    expect((await browser.post(`/dashboard/webhooks/${id}/deliveries/${deliveryId}/retry`)).status).toBe(303);
    await expect.poll(async () => (await receivedAt(key)).length, { timeout: 15_000 }).toBe(2);
    expect((await receivedAt(key)).at(-1)!.signatureValid).toBe(true);
    // the answer's status and body, as text
    await expect
      .poll(async () => (await browser.get(`/dashboard/webhooks/${id}`)).text, { timeout: 15_000 })
      .toContain('<summary>HTTP 200</summary><pre class="text-body">&lt;b&gt;received&lt;/b&gt;</pre>');
  });

  it('an edit disables the endpoint; delete removes it; a viewer has no form and a forged one is 403', async () => {
    const { browser, accountId } = await signedInMember('admin');
    const { id } = await endpointWithReceiver(browser);
    const saved = await browser.post(`/dashboard/webhooks/${id}`, {
      url: 'https://hooks.example.com/new',
      events: 'email.failed',
      description: '',
    });
    expect(saved.status).toBe(303);
    const key = await mailKey(accountId);
    const read = await call<{ url: string; enabled: boolean; events: string[] }>('GET', `/api/v1/webhooks/${id}`, {
      token: key,
    });
    expect(read.json.data).toMatchObject({
      url: 'https://hooks.example.com/new',
      enabled: false,
      events: ['email.failed'],
    });
    const viewer = await signedInMember('viewer', accountId);
    const seen = await viewer.browser.get(`/dashboard/webhooks/${id}`);
    expect(seen.text).not.toContain(`action="/dashboard/webhooks/${id}/delete"`);
    expect((await viewer.browser.post(`/dashboard/webhooks/${id}/delete`)).status).toBe(403);
    expect((await browser.post(`/dashboard/webhooks/${id}/delete`)).status).toBe(303);
    expect((await call('GET', `/api/v1/webhooks/${id}`, { token: key })).status).toBe(404);
  });
});
