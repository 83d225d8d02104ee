// Per-account OTP branding: the operator API that sets it, and the OTP mail and hosted page that show it.
import { describe, expect, it } from 'vitest';
import { accentColors } from '../../../src/otp/branding';
import { accountDb } from '../../support/account-db';
import {
  admin,
  call,
  expectError,
  expectFieldErrors,
  newAccount,
  uniqueAddress,
  waitForInbox,
} from '../../support/api';
import { sendAndRead } from '../../support/otp';
import type { EmailVerificationSent } from '../../support/responses';

type Branding = {
  accountId: string;
  productName: string | null;
  logoUrl: string | null;
  accentColor: string | null;
  supportEmail: string | null;
  updatedAt: string | null;
};

const BRANDING = {
  productName: 'Acme Cloud',
  logoUrl: 'https://cdn.acme.example/logo.png',
  accentColor: '#4F46E5',
  supportEmail: 'help@acme.example',
};

const path = (accountId: string) => `/admin/v1/accounts/${accountId}/otp-branding`;
const putBranding = (accountId: string, body: unknown) => admin<Branding>('PUT', path(accountId), body);

async function brandedAccount(branding: object = BRANDING) {
  const account = await newAccount('Acme Inc');
  const res = await putBranding(account.accountId, branding);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return account;
}

describe('GET /admin/v1/accounts/{accountId}/otp-branding', () => {
  it('is empty for a new account and then shows what was put', async () => {
    const { accountId } = await newAccount();
    const empty = await admin<Branding>('GET', path(accountId));
    expect(empty.status).toBe(200);
    expect(empty.json.data).toEqual({
      accountId,
      productName: null,
      logoUrl: null,
      accentColor: null,
      supportEmail: null,
      updatedAt: null,
    });
    await putBranding(accountId, BRANDING);
    const read = await admin<Branding>('GET', path(accountId));
    expect(read.json.data).toMatchObject({ ...BRANDING, accentColor: '#4f46e5', accountId });
    expect(read.json.data.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('answers 404 for an unknown account, and 401 to an account key', async () => {
    expectError(await admin('GET', path('acc_unknown0000000000')), 404, 'NOT_FOUND');
    const { serverKey, accountId } = await newAccount();
    expectError(await call('GET', path(accountId), { token: serverKey }), 401, 'UNAUTHORIZED');
  });
});

describe('PUT /admin/v1/accounts/{accountId}/otp-branding', () => {
  it('replaces the branding: the colour lowercased, fields left out cleared', async () => {
    const { accountId } = await newAccount();
    const set = await putBranding(accountId, BRANDING);
    expect(set.json.data).toMatchObject({ ...BRANDING, accentColor: '#4f46e5' });
    const cleared = await putBranding(accountId, { productName: 'Only a name', logoUrl: null });
    expect(cleared.status).toBe(200);
    expect(cleared.json.data).toMatchObject({
      productName: 'Only a name',
      logoUrl: null,
      accentColor: null,
      supportEmail: null,
    });
  });

  it('refuses what cannot be shown safely, naming the field', async () => {
    const { accountId } = await newAccount();
    await expectFieldErrors(
      (body) => putBranding(accountId, body),
      [
        [{ logoUrl: 'http://acme.example/logo.png' }, 'logoUrl'],
        [{ logoUrl: 'javascript:alert(1)' }, 'logoUrl'],
        [{ logoUrl: 'https://user:pw@acme.example/logo.png' }, 'logoUrl'],
        [{ logoUrl: `https://acme.example/${'a'.repeat(2048)}` }, 'logoUrl'],
        [{ logoUrl: 'https://acme.example/logo.png\r\nX-Injected: 1' }, 'logoUrl'],
        // A host a CSP source cannot name: its `;` would end the img-src directive and start another.
        [{ logoUrl: 'https://a.example;script-src-elem/logo.png' }, 'logoUrl'],
        [{ logoUrl: 'https://a.example;report-uri/logo.png' }, 'logoUrl'],
        [{ logoUrl: 'https://a.example%3Bsandbox/logo.png' }, 'logoUrl'],
        [{ logoUrl: 'https://a.example,evil.example/logo.png' }, 'logoUrl'],
        // Backslashes the URL parser reads as slashes: not the documented https:// form.
        [{ logoUrl: 'https:\\\\evil.example\\logo.png' }, 'logoUrl'],
        [{ logoUrl: 'https://evil.example\\logo.png' }, 'logoUrl'],
        [{ logoUrl: 'https:evil.example/logo.png' }, 'logoUrl'],
        [{ accentColor: 'red' }, 'accentColor'],
        [{ accentColor: '#12345' }, 'accentColor'],
        [{ accentColor: '#123456;background:url(x)' }, 'accentColor'],
        [{ supportEmail: 'not an address' }, 'supportEmail'],
        [{ productName: 'Acme\nBcc: x@evil.example' }, 'productName'],
        [{ productName: '' }, 'productName'],
        [{ productName: 'x'.repeat(101) }, 'productName'],
        [{ theme: 'dark' }, 'body: Unrecognized key'],
      ],
    );
    expectError(await putBranding('acc_unknown0000000000', BRANDING), 404, 'NOT_FOUND');
  });

  it('stores the URL as the parser normalises it', async () => {
    const { accountId } = await newAccount();
    const set = await putBranding(accountId, { logoUrl: 'https://CDN.Acme.example:443/a/../logo.png?v=1' });
    expect(set.status, JSON.stringify(set.json)).toBe(200);
    expect(set.json.data.logoUrl).toBe('https://cdn.acme.example/logo.png?v=1');
    const read = await admin<Branding>('GET', path(accountId));
    expect(read.json.data.logoUrl).toBe('https://cdn.acme.example/logo.png?v=1');
  });
});

describe('branded OTP mail', () => {
  it('carries the logo, the product name, the accent and the support address; unbranded mail has none', async () => {
    const { serverKey } = await brandedAccount();
    const email = uniqueAddress('branded');
    await sendAndRead('/api/v1/backend-otp/send', serverKey, email);
    const [mail] = await waitForInbox(email);
    expect(mail!.html).toContain('<img src="https://cdn.acme.example/logo.png" alt="Acme Cloud"');
    expect(mail!.html).toContain('Acme Cloud');
    expect(mail!.html).toContain('color:#4f46e5');
    expect(mail!.html).toContain('<a href="mailto:help@acme.example">help@acme.example</a>');
    expect(mail!.text.startsWith('Acme Cloud\n')).toBe(true);
    expect(mail!.text).toContain('Questions? Write to help@acme.example.');

    const plain = await newAccount();
    const other = uniqueAddress('plain');
    await sendAndRead('/api/v1/backend-otp/send', plain.serverKey, other);
    const [unbranded] = await waitForInbox(other);
    expect(unbranded!.html).not.toContain('<img');
    expect(unbranded!.html).not.toContain('mailto:');
    expect(unbranded!.text).not.toContain('Questions?');
  });

  it('words the support line in the mail language and styles the one-click button in the accent', async () => {
    const { serverKey } = await brandedAccount({ ...BRANDING, accentColor: '#ffd60a' });
    const email = uniqueAddress('branded-de');
    await sendAndRead('/api/v1/email-verification/send', serverKey, email, { locale: 'de' });
    const [mail] = await waitForInbox(email);
    expect(mail!.text).toContain('Fragen? Schreiben Sie an help@acme.example.');
    // A light accent gets dark text on the button (the contrast rule picks black over white).
    expect(mail!.html).toContain('background:#ffd60a;color:#111111');
  });

  it('follows a change of branding from the next send on', async () => {
    const { accountId, serverKey } = await brandedAccount();
    await putBranding(accountId, { productName: 'Renamed' });
    const email = uniqueAddress('renamed');
    await sendAndRead('/api/v1/backend-otp/send', serverKey, email);
    const [mail] = await waitForInbox(email);
    expect(mail!.text.startsWith('Renamed\n')).toBe(true);
    expect(mail!.html).not.toContain('<img');
  });

  it('escapes the product name in HTML', async () => {
    const { serverKey } = await brandedAccount({ productName: '<b>Acme & "Co"</b>' });
    const email = uniqueAddress('escaped');
    await sendAndRead('/api/v1/backend-otp/send', serverKey, email);
    const [mail] = await waitForInbox(email);
    expect(mail!.html).toContain('&lt;b&gt;Acme &amp; &quot;Co&quot;&lt;/b&gt;');
    expect(mail!.html).not.toContain('<b>Acme');
  });
});

describe('the hosted page in the account look', () => {
  it('shows logo, name, accent and support line, and lets the logo origin through its CSP', async () => {
    const { serverKey } = await brandedAccount();
    const email = uniqueAddress('page');
    const { res } = await sendAndRead<EmailVerificationSent>('/api/v1/email-verification/send', serverKey, email);
    const page = await call(
      'GET',
      new URL(res.json.data.hostedVerifyUrl).pathname + new URL(res.json.data.hostedVerifyUrl).search,
    );
    expect(page.status).toBe(200);
    expect(page.text).toContain('<img class="logo" src="https://cdn.acme.example/logo.png" alt="Acme Cloud"');
    expect(page.text).toContain('<p class="product">Acme Cloud</p>');
    expect(page.text).toContain('button{background:#4f46e5;color:#ffffff');
    expect(page.text).toContain('<a href="mailto:help@acme.example">help@acme.example</a>');
    expect(page.headers.get('Content-Security-Policy')).toContain('img-src https://cdn.acme.example');
    // After a wrong code (the page without script), still in the account look.
    const form = new URLSearchParams({ sessionId: res.json.data.sessionId, email, code: '000000' });
    const answer = await call('POST', '/verify', {
      rawBody: form.toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(answer.text).toContain('<p class="product">Acme Cloud</p>');
    expect(answer.text).toContain('aria-invalid="true"');
  });

  it('builds its CSP from the parsed origin: a stored logo whose host a CSP cannot name shows no logo', async () => {
    for (const logoUrl of ['https://a.example;script-src-elem/logo.png', 'https://a.example;sandbox/logo.png']) {
      const { accountId, serverKey } = await newAccount();
      // As a row written before the rule on logoUrl held.
      await accountDb(accountId)
        .prepare('INSERT INTO otp_branding (account_id, logo_url, updated_at) VALUES (?, ?, ?)')
        .bind(accountId, logoUrl, new Date().toISOString())
        .run();
      const email = uniqueAddress('page-bad-logo');
      const { sessionId } = await sendAndRead('/api/v1/email-verification/send', serverKey, email);
      const page = await call('GET', `/verify?sessionId=${sessionId}`);
      expect(page.status).toBe(200);
      const policy = page.headers.get('Content-Security-Policy')!;
      expect(policy).not.toContain('img-src');
      expect(policy.split(';').map((directive) => directive.trim().split(' ')[0])).toEqual([
        'default-src',
        'script-src',
        'style-src',
        'connect-src',
        'form-action',
        'frame-ancestors',
        'base-uri',
      ]);
      expect(page.text).not.toContain('<img');
    }
  });

  it('an unbranded page allows no images', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('page-plain');
    const { sessionId } = await sendAndRead('/api/v1/email-verification/send', serverKey, email);
    const page = await call('GET', `/verify?sessionId=${sessionId}`);
    expect(page.text).not.toContain('<header>');
    expect(page.headers.get('Content-Security-Policy')).not.toContain('img-src');
  });
});

describe('accentColors', () => {
  it('picks the text colour with the higher contrast', () => {
    expect(accentColors('#000000').onAccent).toBe('#ffffff');
    expect(accentColors('#ffffff').onAccent).toBe('#111111');
    expect(accentColors('#4f46e5').onAccent).toBe('#ffffff');
    expect(accentColors('#ffd60a').onAccent).toBe('#111111');
  });
});
