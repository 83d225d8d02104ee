// API keys and public OTP tokens in the dashboard: created with the secret shown once, revoked, allowlists.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { admin, call } from '../../support/api';
import { signedInMember } from '../../support/dashboard';

const secretIn = (html: string, label: string) =>
  new RegExp(`${label}<input class="secret" readonly="" value="([^"]+)"`).exec(html)?.[1];

describe('POST /dashboard/keys', () => {
  it('a developer creates a key shown once that works against the API; the list shows it, not the secret', async () => {
    const { browser, accountId } = await signedInMember('developer');
    const res = await browser.post('/dashboard/keys', { name: 'backend', scopes: 'mail_api', mode: 'live' });
    expect(res.status).toBe(201);
    const key = secretIn(res.text, 'API key')!;
    expect(key).toMatch(/^pc_key_[a-z2-7]{32}$/);
    expect((await call('GET', '/api/v1/emails', { token: key })).status).toBe(200);
    const page = await browser.get('/dashboard/keys');
    expect(page.text).toContain('backend');
    expect(page.text).not.toContain(key);
    const listed = await admin<{ apiKeys: { name: string; lastUsedAt: string | null }[] }>(
      'GET',
      `/admin/v1/accounts/${accountId}/api-keys`,
    );
    expect(listed.json.data.apiKeys).toEqual([expect.objectContaining({ name: 'backend' })]);
    const audit = await env.DB.prepare('SELECT action FROM audit_log WHERE account_id = ? AND action = ?')
      .bind(accountId, 'key.created')
      .all();
    expect(audit.results).toHaveLength(1);
  });

  it("400 on the page for the API's rules: no scope, a test key with server_otp", async () => {
    const { browser } = await signedInMember('owner');
    expect((await browser.post('/dashboard/keys', { name: 'none', mode: 'live' })).status).toBe(400);
    const test = await browser.post('/dashboard/keys', { scopes: 'server_otp', mode: 'test' });
    expect(test.status).toBe(400);
    expect(test.text).toContain('a test key takes only the mail_api scope');
  });
});

describe('POST /dashboard/keys/{keyId}/revoke', () => {
  it('an admin revokes a key: the API refuses it at once; a developer may not (403)', async () => {
    const { browser, accountId } = await signedInMember('admin');
    const created = await browser.post('/dashboard/keys', { scopes: 'mail_api', mode: 'live' });
    const key = secretIn(created.text, 'API key')!;
    expect((await call('GET', '/api/v1/emails', { token: key })).status).toBe(200);
    const id = /action="\/dashboard\/keys\/(key_[a-z2-7]+)\/revoke"/.exec(created.text)![1]!;
    const developer = await signedInMember('developer', accountId);
    expect((await developer.browser.post(`/dashboard/keys/${id}/revoke`)).status).toBe(403);
    expect((await browser.post(`/dashboard/keys/${id}/revoke`)).status).toBe(303);
    expect((await call('GET', '/api/v1/emails', { token: key })).status).toBe(401);
    const other = await signedInMember('owner');
    expect((await other.browser.post(`/dashboard/keys/${id}/revoke`)).status).toBe(404);
  });
});

describe('POST /dashboard/otp-tokens, /revoke and /ips', () => {
  it('creates a token with an allowlist (shown once with its secret), changes the allowlist, revokes it', async () => {
    const { browser } = await signedInMember('owner');
    const res = await browser.post('/dashboard/otp-tokens', { allowedIps: '203.0.113.0/24\n2001:db8::1' });
    expect(res.status).toBe(201);
    const token = secretIn(res.text, 'Token')!;
    expect(secretIn(res.text, 'Analytics secret')).toMatch(/^pc_otp_sec_/);
    const id = /action="\/dashboard\/otp-tokens\/(otk_[a-z2-7]+)\/ips"/.exec(res.text)![1]!;
    const send = (ip: string) =>
      call('POST', '/api/v1/instant-otp/send', {
        token,
        body: { email: 'ada@example.com' },
        headers: { 'CF-Connecting-IP': ip },
      });
    expect((await send('198.51.100.7')).status).toBe(403);
    expect((await browser.post(`/dashboard/otp-tokens/${id}/ips`, { allowedIps: '198.51.100.0/24' })).status).toBe(303);
    expect((await send('198.51.100.7')).status).toBe(200);
    const bad = await browser.post(`/dashboard/otp-tokens/${id}/ips`, { allowedIps: 'not-an-ip' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('expected an IPv4/IPv6 address or CIDR range');
    expect((await browser.post(`/dashboard/otp-tokens/${id}/revoke`)).status).toBe(303);
    expect((await send('198.51.100.7')).status).toBe(401);
  });

  it("a token's use is recorded as its last use", async () => {
    const { browser } = await signedInMember('owner');
    const res = await browser.post('/dashboard/otp-tokens', { allowedIps: '' });
    const token = secretIn(res.text, 'Token')!;
    await call('POST', '/api/v1/instant-otp/send', { token, body: { email: 'grace@example.com' } });
    await expect
      .poll(async () => (await browser.get('/dashboard/keys')).text.match(/<td data-label="Last used">never/g)?.length)
      .toBeUndefined();
  });
});
