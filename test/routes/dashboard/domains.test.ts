// Domains and senders in the dashboard: a domain's records with copy buttons, verified once published, rotated,
// deleted; senders confirmed by mail; with the API's rules.
import { describe, expect, it } from 'vitest';
import { call, uniqueAddress, waitForInbox } from '../../support/api';
import { mailKey, signedInMember } from '../../support/dashboard';
import { type Domain, publish, uniqueDomain } from '../../support/domains';

describe('POST /dashboard/domains and the domain page', () => {
  it('a developer adds a domain; its records show with copy buttons; published, "check now" verifies it', async () => {
    const { browser, accountId } = await signedInMember('developer');
    const name = uniqueDomain();
    const added = await browser.post('/dashboard/domains', { name });
    expect(added.status).toBe(303);
    const key = await mailKey(accountId);
    const listed = await call<{ domains: Domain[] }>('GET', '/api/v1/domains', { token: key });
    const id = listed.json.data.domains[0]!.id;
    const page = await browser.get(`/dashboard/domains/${id}`);
    const detail = await call<Domain>('GET', `/api/v1/domains/${id}`, { token: key });
    for (const record of detail.json.data.records) {
      expect(page.text).toContain(`data-copy="${record.name}"`);
    }
    expect(page.text).toContain('<script src="/dashboard/assets/dashboard.js" defer=""></script>');
    await publish(detail.json.data.records);
    expect((await browser.post(`/dashboard/domains/${id}/verify`)).status).toBe(303);
    expect((await call<Domain>('GET', `/api/v1/domains/${id}`, { token: key })).json.data.status).toBe('verified');
    expect((await browser.post(`/dashboard/domains/${id}/rotate`)).status).toBe(303);
    const rotated = await call<Domain>('GET', `/api/v1/domains/${id}`, { token: key });
    expect(rotated.json.data.records.filter((r) => r.purpose === 'dkim')).toHaveLength(2);
    expect((await browser.post(`/dashboard/domains/${id}/delete`)).status).toBe(303);
    expect((await call('GET', `/api/v1/domains/${id}`, { token: key })).status).toBe(404);
  });

  it("400 on the page for a name that is no domain; a viewer has no form; another account's domain is 404", async () => {
    const { browser, accountId } = await signedInMember('owner');
    const bad = await browser.post('/dashboard/domains', { name: 'not a domain' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('name:');
    await browser.post('/dashboard/domains', { name: uniqueDomain() });
    const listed = await call<{ domains: Domain[] }>('GET', '/api/v1/domains', { token: await mailKey(accountId) });
    const id = listed.json.data.domains[0]!.id;
    const viewer = await signedInMember('viewer', accountId);
    expect((await viewer.browser.get('/dashboard/domains')).text).not.toContain('action="/dashboard/domains"');
    expect((await viewer.browser.get(`/dashboard/domains/${id}`)).text).not.toContain('/verify"');
    expect((await (await signedInMember('owner')).browser.get(`/dashboard/domains/${id}`)).status).toBe(404);
  });
});

describe('POST /dashboard/senders', () => {
  it('adds a sender, whose owner gets the confirmation mail (again on request); delete removes it', async () => {
    const { browser, accountId } = await signedInMember('admin');
    const email = uniqueAddress('sender');
    expect((await browser.post('/dashboard/senders', { email, name: 'Billing' })).status).toBe(303);
    await waitForInbox(email);
    const page = await browser.get('/dashboard/domains');
    expect(page.text).toContain('waiting for confirmation');
    const id = /\/dashboard\/senders\/(snd_[a-z2-7]+)\/resend/.exec(page.text)![1]!;
    expect((await browser.post(`/dashboard/senders/${id}/resend`)).status).toBe(303);
    await waitForInbox(email, 2);
    expect((await browser.post(`/dashboard/senders/${id}/delete`)).status).toBe(303);
    const key = await mailKey(accountId);
    expect((await call('GET', `/api/v1/senders/${id}`, { token: key })).status).toBe(404);
  });
});
