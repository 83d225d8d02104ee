// Sessions: a member's signed-in browsers (revocable), and switching between the accounts of one address.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { admin, uniqueAddress } from '../../support/api';
import { Browser, bareAccount, signedInMember } from '../../support/dashboard';

describe('GET /dashboard/sessions', () => {
  it("lists the address's live sessions with this browser marked", async () => {
    const { browser, email } = await signedInMember('viewer');
    const second = new Browser();
    await second.signIn(email, 2);
    const page = await browser.get('/dashboard/sessions');
    expect(page.status).toBe(200);
    expect(page.text).toContain('this browser');
    expect(page.text.match(/\/dashboard\/sessions\/dss_[a-z2-7]+\/revoke/g)).toHaveLength(1);
    expect(page.text).toContain(second.ip);
  });
});

describe('POST /dashboard/sessions/{sessionId}/revoke', () => {
  it('signs another browser out: its cookie is refused from then on', async () => {
    const { browser, email } = await signedInMember('viewer');
    const second = new Browser();
    await second.signIn(email, 2);
    const page = await browser.get('/dashboard/sessions');
    const path = /\/dashboard\/sessions\/dss_[a-z2-7]+\/revoke/.exec(page.text)![0];
    const res = await browser.post(path);
    expect(res.status).toBe(303);
    const refused = await second.get('/dashboard/members');
    expect(refused.status).toBe(303);
    expect(refused.location).toContain('/dashboard/login');
    expect((await browser.get('/dashboard/members')).status).toBe(200);
  });

  it("another address's session is not found (404) and stays live", async () => {
    const one = await signedInMember('owner');
    const other = await signedInMember('owner');
    const { id } = (await env.DB.prepare('SELECT id FROM dashboard_sessions WHERE email = ?')
      .bind(other.email)
      .first<{ id: string }>())!;
    expect((await one.browser.post(`/dashboard/sessions/${id}/revoke`)).status).toBe(404);
    expect((await other.browser.get('/dashboard/members')).status).toBe(200);
  });

  it('an expired session is refused', async () => {
    const { browser, email } = await signedInMember('viewer');
    await env.DB.prepare("UPDATE dashboard_sessions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE email = ?")
      .bind(email)
      .run();
    expect((await browser.get('/dashboard/members')).status).toBe(303);
  });
});

describe('POST /dashboard/account', () => {
  it('an address that is a member of two accounts switches between them, and only to its own', async () => {
    const email = uniqueAddress('two');
    const first = await bareAccount('First account');
    const second = await bareAccount('Second account');
    await admin('POST', `/admin/v1/accounts/${first}/members`, { email, role: 'owner' });
    const other = await admin<{ id: string }>('POST', `/admin/v1/accounts/${second}/members`, {
      email,
      role: 'viewer',
    });
    const browser = new Browser();
    await browser.signIn(email);
    expect((await browser.get('/dashboard/members')).text).toContain('First account');
    const res = await browser.post('/dashboard/account', { memberId: other.json.data.id });
    expect(res.status).toBe(303);
    const page = await browser.get('/dashboard/members');
    expect(page.text).toContain('Second account');
    expect(page.text).toContain('(viewer)');
    const stranger = await signedInMember('owner');
    expect((await browser.post('/dashboard/account', { memberId: stranger.memberId })).status).toBe(404);
  });
});
