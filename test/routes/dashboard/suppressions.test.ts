// Suppressions in the dashboard: the list with reason and expiry, adding and lifting one, as the API does it.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, uniqueAddress } from '../../support/api';
import { mailKey, signedInMember } from '../../support/dashboard';
import type { SuppressionList } from '../../support/responses';

const listed = async (key: string) =>
  (await call<SuppressionList>('GET', '/api/v1/suppressions', { token: key })).json.data.suppressions;

describe('GET /dashboard/suppressions', () => {
  it('lists the entries with reason, note, expiry; a viewer gets no form and no button', async () => {
    const { browser, accountId } = await signedInMember('viewer');
    const key = await mailKey(accountId);
    const address = uniqueAddress('listed');
    await call('POST', '/api/v1/suppressions', { token: key, body: { email: address, note: 'asked us to stop' } });
    const page = await browser.get('/dashboard/suppressions');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<td data-label="Address">${address}</td>`);
    expect(page.text).toContain('asked us to stop');
    expect(page.text).toContain('for good');
    expect(page.text).not.toContain('action="/dashboard/suppressions');
  });
});

describe('POST /dashboard/suppressions', () => {
  it('a developer suppresses an address until a time: the API lists it, the audit log names the developer', async () => {
    const { browser, accountId, email } = await signedInMember('developer');
    const key = await mailKey(accountId);
    const address = uniqueAddress('Added');
    const until = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 16);
    const res = await browser.post('/dashboard/suppressions', { email: address, note: 'by hand', expiresAt: until });
    expect(res.status).toBe(303);
    expect(await listed(key)).toEqual([
      expect.objectContaining({
        email: address.toLowerCase(),
        reason: 'manual',
        note: 'by hand',
        expiresAt: `${until}:00.000Z`,
      }),
    ]);
    const audit = await env.DB.prepare('SELECT actor, target FROM audit_log WHERE account_id = ? AND action = ?')
      .bind(accountId, 'suppression.added')
      .all();
    expect(audit.results).toEqual([{ actor: email, target: address.toLowerCase() }]);
  });

  it('400 on the page for a bad address or a past expiry (the API rules)', async () => {
    const { browser } = await signedInMember('owner');
    const bad = await browser.post('/dashboard/suppressions', { email: 'nope' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('email:');
    const past = await browser.post('/dashboard/suppressions', {
      email: uniqueAddress(),
      expiresAt: '2020-01-01T00:00',
    });
    expect(past.status).toBe(400);
    expect(past.text).toContain('expiresAt: must be in the future');
  });
});

describe('POST /dashboard/suppressions/remove', () => {
  it('lifts a suppression; an address not listed is 404 on the page', async () => {
    const { browser, accountId } = await signedInMember('admin');
    const key = await mailKey(accountId);
    const address = uniqueAddress('lifted');
    await call('POST', '/api/v1/suppressions', { token: key, body: { email: address } });
    expect((await browser.post('/dashboard/suppressions/remove', { email: address })).status).toBe(303);
    expect(await listed(key)).toEqual([]);
    const again = await browser.post('/dashboard/suppressions/remove', { email: address });
    expect(again.status).toBe(404);
    expect(again.text).toContain('not on the suppression list');
  });
});
