// Signing in to the dashboard: an address, a code mailed through postcode's own backend OTP flow, a session cookie.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { accountDb } from '../../support/account-db';
import { admin, inbox, uniqueAddress, waitForInbox } from '../../support/api';
import { Browser, bareAccount, fieldValue, signedInMember, signInCode, signInMails } from '../../support/dashboard';

async function member(role: 'owner' | 'viewer' = 'owner') {
  const accountId = await bareAccount('sign-in');
  const email = uniqueAddress('member');
  expect((await admin('POST', `/admin/v1/accounts/${accountId}/members`, { email, role })).status).toBe(201);
  return { accountId, email };
}

/** A page's HTML with the parts that differ per request (the session id, the address) taken out. */
const shape = (html: string, email: string) =>
  html.replaceAll(email, '<address>').replace(/otp_[0-9a-f]{64}_[a-z2-7]{26}/, '<session>');

describe('GET /dashboard/login', () => {
  it('200 with the address form, a CSRF cookie and a policy that allows no inline script', async () => {
    const browser = new Browser();
    const page = await browser.get('/dashboard/login');
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="email"');
    expect(fieldValue(page.text, 'csrf')).toBe(browser.cookies.get('pc_csrf'));
    const policy = page.headers.get('Content-Security-Policy')!;
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    const cookie = page.headers.getSetCookie().find((c) => c.startsWith('pc_csrf='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
  });

  it('a signed-in browser goes on to the dashboard', async () => {
    const { browser } = await signedInMember('viewer');
    const page = await browser.get('/dashboard/login');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/dashboard');
  });
});

describe('POST /dashboard/login', () => {
  it("mails a member a code from the sign-in account's backend OTP flow", async () => {
    const { email } = await member();
    const browser = new Browser();
    const page = await browser.post('/dashboard/login', { email });
    expect(page.status).toBe(200);
    expect(fieldValue(page.text, 'sessionId')).toMatch(/^otp_[0-9a-f]{64}_[a-z2-7]{26}$/);
    const [mail] = await signInMails(email);
    expect(mail!.subject).toBe('Your postcode sign-in code');
    expect(mail!.text).toMatch(/^\d{6}$/m);
    expect(mail!.text).toContain('Sign in to the postcode dashboard with this code:');
  });

  it('a non-member gets the same page and no mail', async () => {
    const { email } = await member();
    const stranger = uniqueAddress('stranger');
    const browser = new Browser();
    const known = await browser.post('/dashboard/login', { email });
    const unknown = await browser.post('/dashboard/login', { email: stranger });
    expect(unknown.status).toBe(known.status);
    expect(shape(unknown.text, stranger)).toBe(shape(known.text, email));
    await waitForInbox(email);
    expect(await inbox(stranger)).toEqual([]);
  });

  it('400 with the reason for an address that is not one, on the same page', async () => {
    const page = await new Browser().post('/dashboard/login', { email: 'not an address' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('email:');
    expect(page.text).toContain('name="email"');
  });

  it('429 after RATE_SIGNIN_PER_ADDRESS codes asked for one address, member or not', async () => {
    const bindings = { ...env, RATE_SIGNIN_PER_ADDRESS: '2' };
    for (const email of [(await member()).email, uniqueAddress('stranger')]) {
      const browser = new Browser('http://localhost:8787', {
        bindings,
        ip: `198.51.100.${Math.floor(Math.random() * 200)}`,
      });
      for (let i = 0; i < 2; i++) expect((await browser.post('/dashboard/login', { email })).status).toBe(200);
      const refused = await browser.post('/dashboard/login', { email });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
      expect(refused.text).toContain('Too many sign-in attempts');
    }
  });

  it('429 after RATE_SIGNIN_PER_IP addresses from one IP', async () => {
    const bindings = { ...env, RATE_SIGNIN_PER_IP: '3' };
    const browser = new Browser('http://localhost:8787', { bindings, ip: '203.0.113.77' });
    for (let i = 0; i < 3; i++) {
      expect((await browser.post('/dashboard/login', { email: uniqueAddress('ip') })).status).toBe(200);
    }
    expect((await browser.post('/dashboard/login', { email: uniqueAddress('ip') })).status).toBe(429);
    const other = new Browser('http://localhost:8787', { bindings, ip: '203.0.113.78' });
    expect((await other.post('/dashboard/login', { email: uniqueAddress('ip') })).status).toBe(200);
  });

  it('403 without the CSRF token, or from another origin', async () => {
    const { email } = await member();
    const browser = new Browser();
    expect((await browser.post('/dashboard/login', { email }, { csrf: null })).status).toBe(403);
    expect((await browser.post('/dashboard/login', { email }, { csrf: 'f'.repeat(32) })).status).toBe(403);
    expect((await browser.post('/dashboard/login', { email }, { origin: 'https://evil.example' })).status).toBe(403);
    expect(await inbox(email)).toEqual([]);
  });
});

describe('POST /dashboard/login/code', () => {
  it('the right code opens a 30-day session: an HttpOnly, SameSite=Lax cookie whose token D1 keeps only hashed', async () => {
    const { email, accountId } = await member();
    const browser = new Browser();
    const done = await browser.signIn(email);
    expect(done.location).toBe('/dashboard/members');
    const cookie = done.headers.getSetCookie().find((c) => c.startsWith('pc_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/dashboard/);
    expect(cookie).toMatch(/Max-Age=2592000/);
    expect(cookie).not.toMatch(/Secure/); // localhost serves plain http
    const token = browser.cookies.get('pc_session')!;
    const rows = await env.DB.prepare('SELECT * FROM dashboard_sessions WHERE email = ?').bind(email).all();
    expect(rows.results).toHaveLength(1);
    expect(JSON.stringify(rows.results)).not.toContain(token);
    const page = await browser.get('/dashboard/members');
    expect(page.status).toBe(200);
    expect(page.text).toContain(email);
    const audit = await env.DB.prepare('SELECT actor, action FROM audit_log WHERE account_id = ?')
      .bind(accountId)
      .all();
    expect(audit.results).toContainEqual({ actor: email, action: 'member.signed_in' });
    // The code was a backend OTP session of the sign-in account: its history has the verification.
    await expect
      .poll(
        async () =>
          (
            await accountDb('acc_postcode')
              .prepare('SELECT account_id, channel FROM otp_verifications WHERE email = ?')
              .bind(email)
              .all()
          ).results,
      )
      .toEqual([{ account_id: 'acc_postcode', channel: 'backend' }]);
  });

  it('the cookie is Secure on any host but a loopback one', async () => {
    const { email } = await member();
    const done = await new Browser('https://postcode.example').signIn(email);
    expect(done.headers.getSetCookie().find((c) => c.startsWith('pc_session='))).toMatch(/Secure/);
  });

  it("a wrong code and a non-member's code get the same 400 page and no session", async () => {
    const { email } = await member();
    const stranger = uniqueAddress('stranger');
    const browser = new Browser();
    const attempts = [];
    for (const address of [email, stranger]) {
      const started = await browser.post('/dashboard/login', { email: address });
      const sessionId = fieldValue(started.text, 'sessionId');
      const page = await browser.post('/dashboard/login/code', { email: address, sessionId, code: '000000' });
      expect(page.status).toBe(400);
      attempts.push(shape(page.text, address));
    }
    expect(attempts[1]).toBe(attempts[0]);
    expect(attempts[0]).toContain('That code is not right');
    expect(browser.cookies.has('pc_session')).toBe(false);
  });

  it('a code mailed to one address does not sign in another', async () => {
    const first = await member();
    const second = await member();
    const browser = new Browser();
    const started = await browser.post('/dashboard/login', { email: first.email });
    const code = await signInCode(first.email);
    const page = await browser.post('/dashboard/login/code', {
      email: second.email,
      sessionId: fieldValue(started.text, 'sessionId'),
      code,
    });
    expect(page.status).toBe(400);
  });

  it('only a dashboard path is followed after sign-in', async () => {
    const { email } = await member();
    const browser = new Browser();
    const started = await browser.post('/dashboard/login', { email, next: 'https://evil.example/' });
    const code = await signInCode(email);
    const done = await browser.post('/dashboard/login/code', {
      email,
      sessionId: fieldValue(started.text, 'sessionId'),
      code,
      next: fieldValue(started.text, 'next'),
    });
    expect(done.location).toBe('/dashboard');
  });
});

describe('POST /dashboard/logout', () => {
  it('ends the session: the cookie is cleared and, replayed, refused', async () => {
    const { browser } = await signedInMember('viewer');
    const token = browser.cookies.get('pc_session')!;
    const out = await browser.post('/dashboard/logout');
    expect(out.status).toBe(303);
    expect(out.location).toBe('/dashboard/login');
    expect(browser.cookies.has('pc_session')).toBe(false);
    browser.cookies.set('pc_session', token);
    const page = await browser.get('/dashboard/members');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/dashboard/login?next=%2Fdashboard%2Fmembers');
    expect((await browser.post('/dashboard/logout')).status).toBe(401);
  });
});
