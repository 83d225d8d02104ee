// Email verification (routes 16, 17), its status route GET /api/v1/email-verification/{sessionId} and the
// hosted verify page (/verify): interface-v1.md endpoints 16-17, decisions.md "One-time codes".
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  call,
  codeFromInbox,
  expectError,
  expectFieldErrors,
  inbox,
  newAccount,
  postWith,
  uniqueAddress,
  waitForInbox,
} from '../../support/api';
import {
  clearExpiredSession,
  expectExpiry,
  expireSession,
  ISO,
  SESSION_ID,
  sendAndRead as sendCodeAndRead,
  unknownSessionId,
  wrongCode,
} from '../../support/otp';
import type { EmailVerificationSent, OtpSent, VerificationStatus, Verified } from '../../support/responses';

const SEND = '/api/v1/email-verification/send';
const VERIFY = '/api/v1/email-verification/verify';
const STATUS = (sessionId: string) => `/api/v1/email-verification/${sessionId}`;

const verified = { success: true, data: { verified: true } };

const send = (token: string, body: unknown) => call<EmailVerificationSent>('POST', SEND, { token, body });
const verify = (token: string, body: unknown) => call<Verified>('POST', VERIFY, { token, body });
const status = (token: string, sessionId: string) => call<VerificationStatus>('GET', STATUS(sessionId), { token });

const sendAndRead = (token: string, email: string, extra: Record<string, unknown> = {}) =>
  sendCodeAndRead<EmailVerificationSent>(SEND, token, email, extra);

const wrong = wrongCode;

/** The hosted page's form, posted like a browser without JavaScript. */
const postForm = (fields: Record<string, string>) =>
  call('POST', '/verify', {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
/** The same form, posted by the page's script (it asks for JSON). */
const postFormForJson = (fields: Record<string, string>) =>
  call('POST', '/verify', {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
  });

describe('POST /api/v1/email-verification/send', () => {
  it('sends a code and answers with hostedVerifyUrl on PUBLIC_BASE_URL', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('ev');
    const before = Date.now();
    const res = await send(serverKey, { email });
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      data: {
        sessionId: expect.stringMatching(SESSION_ID),
        expiresAt: expect.stringMatching(ISO),
        email,
        hostedVerifyUrl: expect.any(String),
        sent: true,
      },
    });
    const { sessionId } = res.json.data;
    expect(res.json.data.hostedVerifyUrl).toBe(`http://postcode.test/verify?sessionId=${sessionId}`);
    expectExpiry(res.json.data.expiresAt, { before, after });
    const code = await codeFromInbox(email, 6);
    expect(JSON.stringify(res.json)).not.toContain(code);
  });

  it('never takes the hostedVerifyUrl origin from the Host header', async () => {
    const { serverKey } = await newAccount();
    const res = await exports.default.fetch(
      new Request(`http://evil.example${SEND}`, {
        method: 'POST',
        headers: {
          Host: 'evil.example',
          'X-Forwarded-Host': 'evil.example',
          'X-Forwarded-Proto': 'https',
          Authorization: `Bearer ${serverKey}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify({ email: uniqueAddress('ev-host') }),
      }),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { sessionId: string; hostedVerifyUrl: string } };
    expect(body.data.hostedVerifyUrl).toBe(`http://postcode.test/verify?sessionId=${body.data.sessionId}`);
    expect(body.data.hostedVerifyUrl).not.toContain('evil');
  });

  it('otpDigits 4 and 10 give codes of that length that verify', async () => {
    const { serverKey } = await newAccount();
    for (const otpDigits of [4, 10]) {
      const email = uniqueAddress('ev-digits');
      const { sessionId, code } = await sendAndRead(serverKey, email, { otpDigits });
      expect(code).toMatch(new RegExp(`^[0-9]{${otpDigits}}$`));
      expect((await verify(serverKey, { sessionId, email, code })).json).toEqual(verified);
    }
  });

  it('400 INVALID_INPUT for otpDigits outside 4-10, expiresInSeconds outside 60-3600 and CR/LF; nothing is sent', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('ev-oob');
    const cases: [unknown, string][] = [
      [{ email, otpDigits: 3 }, 'otpDigits'],
      [{ email, otpDigits: 11 }, 'otpDigits'],
      [{ email, otpDigits: '6' }, 'otpDigits'],
      [{ email, expiresInSeconds: 59 }, 'expiresInSeconds'],
      [{ email, expiresInSeconds: 3601 }, 'expiresInSeconds'],
      [{ email, subject: 'Verify\r\nBcc: victim@example.com' }, 'subject'],
      [{ email, verificationLine: 'line\nbreak' }, 'verificationLine'],
      [{ email: 'not an address' }, 'email'],
    ];
    await expectFieldErrors((body) => send(serverKey, body), cases);
    expect(await inbox(email)).toHaveLength(0);
  });

  it('429 RATE_LIMITED on the 6th send to one recipient', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('ev-rate');
    for (let i = 0; i < 5; i++) expect((await send(serverKey, { email })).status).toBe(200);
    const limited = await send(serverKey, { email });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers.get('Retry-After')).toMatch(/^[1-9]\d*$/);
    expect(await waitForInbox(email, 5)).toHaveLength(5);
  });

  it('503 SMTP_NOT_CONFIGURED without SMTP_HOST', async () => {
    const { serverKey } = await newAccount();
    expectError(
      await postWith({ SMTP_HOST: '' }, SEND, serverKey, { email: uniqueAddress('ev-nosmtp') }),
      503,
      'SMTP_NOT_CONFIGURED',
    );
  });
});

describe('POST /api/v1/email-verification/verify', () => {
  it('right code → verified:true, then 404 (consumed); wrong → 400 INVALID_CODE; unknown → 404', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('ev-verify');
    const { sessionId, code } = await sendAndRead(serverKey, email);
    expectError(await verify(serverKey, { sessionId, email, code: wrong(code) }), 400, 'INVALID_CODE');
    expectError(await verify(serverKey, { sessionId, email, code: 'abcdef' }), 400, 'INVALID_CODE');
    expectError(await verify(serverKey, { sessionId, email: uniqueAddress('ev-other'), code }), 400, 'INVALID_CODE');
    const ok = await verify(serverKey, { sessionId, email: email.toUpperCase(), code });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual(verified);
    expectError(await verify(serverKey, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    expectError(await verify(serverKey, { sessionId: unknownSessionId(), email, code }), 404, 'SESSION_NOT_FOUND');
  });

  it('another account → 404; an instant session → 404', async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const email = uniqueAddress('ev-foreign');
    const { sessionId, code } = await sendAndRead(other.serverKey, email);
    expectError(await verify(mine.serverKey, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    expect((await verify(other.serverKey, { sessionId, email, code })).json).toEqual(verified);

    const instantEmail = uniqueAddress('ev-instant');
    const instant = await call<OtpSent>('POST', '/api/v1/instant-otp/send', {
      token: mine.serverKey,
      body: { email: instantEmail },
    });
    const instantCode = await codeFromInbox(instantEmail);
    expectError(
      await verify(mine.serverKey, { sessionId: instant.json.data.sessionId, email: instantEmail, code: instantCode }),
      404,
      'SESSION_NOT_FOUND',
    );
  });
});

describe('GET /api/v1/email-verification/{sessionId}', () => {
  it('pending → verified (with verifiedAt)', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('ev-status');
    const { sessionId, expiresAt, code } = await sendAndRead(serverKey, email);
    const pending = await status(serverKey, sessionId);
    expect(pending.status).toBe(200);
    expect(pending.json).toEqual({ success: true, data: { sessionId, email, status: 'pending', expiresAt } });

    expect((await verify(serverKey, { sessionId, email, code })).json).toEqual(verified);
    const done = await status(serverKey, sessionId);
    expect(done.status).toBe(200);
    expect(done.json).toEqual({
      success: true,
      data: { sessionId, email, status: 'verified', expiresAt, verifiedAt: expect.stringMatching(ISO) },
    });
    expect(Date.parse(done.json.data.verifiedAt!)).toBeLessThanOrEqual(Date.parse(expiresAt));
  });

  it("'locked' after 5 wrong codes", async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('ev-locked');
    const { sessionId, code } = await sendAndRead(serverKey, email);
    for (let i = 0; i < 4; i++)
      expectError(await verify(serverKey, { sessionId, email, code: wrong(code) }), 400, 'INVALID_CODE');
    expect((await status(serverKey, sessionId)).json.data.status).toBe('pending');
    expectError(await verify(serverKey, { sessionId, email, code: wrong(code) }), 400, 'INVALID_CODE');
    const locked = await status(serverKey, sessionId);
    expect(locked.json.data).toMatchObject({ sessionId, email, status: 'locked' });
    expect(locked.json.data.verifiedAt).toBeUndefined();
    expectError(await verify(serverKey, { sessionId, email, code }), 429, 'RATE_LIMITED');
    expect((await status(serverKey, sessionId)).json.data.status).toBe('locked');
  });

  it("'expired' once expires_at has passed; gone (404) after the session alarm", async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('ev-expired');
    const { sessionId, code } = await sendAndRead(serverKey, email);
    await expireSession(sessionId);
    const expired = await status(serverKey, sessionId);
    expect(expired.status).toBe(200);
    expect(expired.json.data).toMatchObject({ sessionId, email, status: 'expired' });
    expectError(await verify(serverKey, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');

    // A day later (the keep time after expiry) the alarm deletes it, once D1 knows it expired.
    await clearExpiredSession(sessionId);
    expectError(await status(serverKey, sessionId), 404, 'SESSION_NOT_FOUND');
    expectError(await verify(serverKey, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
  });

  it("404 for another account's session, a backend session and an unknown id", async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const { sessionId } = await sendAndRead(other.serverKey, uniqueAddress('ev-foreign-status'));
    expectError(await status(mine.serverKey, sessionId), 404, 'SESSION_NOT_FOUND');
    expect((await status(other.serverKey, sessionId)).status).toBe(200);

    const backendEmail = uniqueAddress('ev-backend-status');
    const backend = await call<OtpSent>('POST', '/api/v1/backend-otp/send', {
      token: mine.serverKey,
      body: { email: backendEmail },
    });
    expect(backend.status).toBe(200);
    expectError(await status(mine.serverKey, backend.json.data.sessionId), 404, 'SESSION_NOT_FOUND');
    expectError(await status(mine.serverKey, unknownSessionId()), 404, 'SESSION_NOT_FOUND');
    expectError(await status(mine.serverKey, 'abc'), 404, 'SESSION_NOT_FOUND');
  });

  it('400 INVALID_INPUT for an id shorter than 3 or longer than 128 characters', async () => {
    const { serverKey } = await newAccount();
    for (const id of ['ab', 'x', `otp_${'a'.repeat(125)}`]) {
      const res = await status(serverKey, id);
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toMatch(/^sessionId/);
    }
  });
});

describe('hosted verify page (/verify)', () => {
  it('GET serves an accessible HTML form with anti-framing headers', async () => {
    const { serverKey } = await newAccount();
    const { sessionId } = await sendAndRead(serverKey, uniqueAddress('page'));
    const res = await call('GET', `/verify?sessionId=${sessionId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toMatch(/^text\/html/);
    expect(res.headers.get('Content-Security-Policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('X-Frame-Options')).toBe('DENY');
    const html = res.text;
    expect(html).toMatch(/<form[^>]*method="post"/i);
    expect(html).toContain('<label for="code">');
    expect(html).toMatch(/<input[^>]*id="code"[^>]*>/);
    const codeInput = html.match(/<input[^>]*id="code"[^>]*>/)![0];
    expect(codeInput).toContain('autocomplete="one-time-code"');
    expect(codeInput).toContain('inputmode="numeric"');
    expect(html).toContain(`value="${sessionId}"`);
  });

  it('POST with a wrong code shows the attempts left; with the right code shows success and the status route says verified', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('page-post');
    const { sessionId, code } = await sendAndRead(serverKey, email);

    const wrongPage = await postForm({ sessionId, email, code: wrong(code) });
    expect(wrongPage.status).toBe(200);
    expect(wrongPage.headers.get('Content-Type')).toMatch(/^text\/html/);
    expect(wrongPage.text).toMatch(/4 attempts left/);
    expect((await status(serverKey, sessionId)).json.data.status).toBe('pending');

    const okPage = await postForm({ sessionId, email, code });
    expect(okPage.status).toBe(200);
    expect(okPage.text).toMatch(/verified/i);
    expect(okPage.text).not.toMatch(/attempts? left/);
    expect(okPage.text).not.toContain(code);

    const after = await status(serverKey, sessionId);
    expect(after.json.data).toMatchObject({ status: 'verified', verifiedAt: expect.stringMatching(ISO) });
    // Consumed: the API cannot verify it again.
    expectError(await verify(serverKey, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
  });

  it('POST without sessionId, or without email and code or a token → 400: a page, or the envelope for the script', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('page-incomplete');
    const { sessionId, code } = await sendAndRead(serverKey, email);
    const cases: [Record<string, string>, string][] = [
      [{}, 'sessionId'],
      [{ email, code }, 'sessionId'],
      [{ sessionId: '', token: 'tok' }, 'sessionId'],
      [{ sessionId }, 'email'],
      [{ sessionId, token: '' }, 'email'],
      [{ sessionId, code }, 'email'],
      [{ sessionId, email }, 'code'],
      [{ sessionId, email, code: ' ' }, 'code'],
    ];
    for (const [fields, missing] of cases) {
      const page = await postForm(fields);
      expect(page.status, JSON.stringify(fields)).toBe(400);
      expect(page.headers.get('Content-Type')).toMatch(/^text\/html/);
      expect(page.headers.get('Content-Security-Policy')).toContain("default-src 'none'");
      const answer = await postFormForJson(fields);
      expectError(answer, 400, 'INVALID_INPUT');
      expect(answer.json.error.message, JSON.stringify(fields)).toMatch(new RegExp(`^${missing}: `));
    }
    // With a session, the page asks again for what is missing; the session is untouched and the code verifies.
    const asked = await postForm({ sessionId, code });
    expect(asked.text).toContain('Enter your email address and the code.');
    expect(asked.text).toContain(`value="${sessionId}"`);
    expect((await postForm({ sessionId })).text).not.toContain('expired');
    const ok = await postForm({ sessionId, email, code });
    expect(ok.status).toBe(200);
    expect(ok.text).toMatch(/is verified/i);
  });

  it('does not reflect markup from the query string', async () => {
    const res = await call('GET', `/verify?sessionId=${encodeURIComponent('"><script>alert(1)</script>')}`);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('<script>alert(1)</script>');
    expect(res.text).not.toContain('"><script>');
  });

  it('the 5-attempt lock applies on the page', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('page-lock');
    const { sessionId, code } = await sendAndRead(serverKey, email);
    for (let i = 0; i < 5; i++) expect((await postForm({ sessionId, email, code: wrong(code) })).status).toBe(200);
    const lockedPage = await postForm({ sessionId, email, code });
    expect(lockedPage.text).not.toMatch(/is verified/i);
    expect((await status(serverKey, sessionId)).json.data.status).toBe('locked');
  });

  it('unknown session, or a session of another flavour → 404 page', async () => {
    const { serverKey } = await newAccount();
    for (const id of [unknownSessionId(), 'otp_aaaaaaaaaaaaaaaaaaaaaaaaaa']) {
      const unknown = await call('GET', `/verify?sessionId=${id}`);
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('Content-Type')).toMatch(/^text\/html/);
    }
    expect((await call('GET', '/verify')).status).toBe(404);

    const email = uniqueAddress('page-backend');
    const backend = await call<OtpSent>('POST', '/api/v1/backend-otp/send', { token: serverKey, body: { email } });
    expect((await call('GET', `/verify?sessionId=${backend.json.data.sessionId}`)).status).toBe(404);
    // Nor can the page verify it.
    const code = await codeFromInbox(email);
    const page = await postForm({ sessionId: backend.json.data.sessionId, email, code });
    expect(page.text).not.toMatch(/is verified/i);
    expect(
      (
        await call('POST', '/api/v1/backend-otp/verify', {
          token: serverKey,
          body: { sessionId: backend.json.data.sessionId, email, code },
        })
      ).json,
    ).toEqual(verified);
  });
});
