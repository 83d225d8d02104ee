// Instant OTP (routes 7, 8, 9) and the legacy aliases (10, 11, 12): interface-v1.md endpoints 7-12 and
// Authentication; decisions.md "Authentication", "One-time codes", "Rate limits".
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  call,
  fetchWith,
  codeFromInbox,
  expectError,
  inbox,
  newAccount,
  uniqueAddress,
  waitForInbox,
  type ApiResponse,
  type TestAccount,
} from '../support/api';
import { expectExpiry, expireSession, KEEP_AFTER_EXPIRY_MS, sendAndRead as sendCodeAndRead, ISO, type SeededVerification, seedVerifications, SESSION_ID, sessionStub, unknownSessionId, wrongCode } from '../support/otp';

const SEND = '/api/v1/instant-otp/send';
const VERIFY = '/api/v1/instant-otp/verify';
const HISTORY = '/api/v1/instant-otp/verifications';
const LEGACY_SEND = '/api/v1/otp/send';
const LEGACY_VERIFY = '/api/v1/otp/verify';
const LEGACY_HISTORY = '/api/v1/otp/verifications';

const ALLOWED_IP = '203.0.113.9';
const BLOCKED_IP = '198.51.100.1';

const send = (token: string, body: unknown, headers?: Record<string, string>, path = SEND) =>
  call('POST', path, { token, body, headers });
const verify = (token: string, body: unknown, path = VERIFY) => call('POST', path, { token, body });
const history = (path: string, token: string | null, secret: string | null, headers: Record<string, string> = {}) =>
  call('GET', path, { token, headers: secret === null ? headers : { ...headers, 'X-Otp-Secret': secret } });

const sendAndRead = (token: string, email: string, extra: Record<string, unknown> = {}, path = SEND) =>
  sendCodeAndRead(path, token, email, extra);

const wrong = wrongCode;

const storedRows = (sessionId: string) =>
  runInDurableObject(sessionStub(sessionId), (_instance, state) =>
    state.storage.sql.exec<{ attempts: number }>('SELECT attempts FROM sessions WHERE id = ?', sessionId).toArray(),
  );

/** A public token of the account that only accepts 203.0.113.0/24. */
async function restrictedToken(accountId: string) {
  const res = await admin('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, { allowedIps: ['203.0.113.0/24'] });
  expect(res.status).toBe(201);
  return res.json.data as { token: string; analyticsSecret: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectRetryAfter(res: ApiResponse, max: number) {
  const value = res.headers.get('Retry-After');
  expect(value, 'Retry-After').toMatch(/^\d+$/);
  expect(Number(value)).toBeGreaterThanOrEqual(1);
  expect(Number(value)).toBeLessThanOrEqual(max);
}

describe('POST /api/v1/instant-otp/send', () => {
  for (const kind of ['publicToken', 'serverKey'] as const) {
    it(`sends a 6-digit code that expires in 10 minutes (${kind === 'publicToken' ? 'public token' : 'server_otp key'})`, async () => {
      const account = await newAccount();
      const email = uniqueAddress('instant');
      const before = Date.now();
      const res = await send(account[kind], { email });
      const after = Date.now();
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        success: true,
        data: { sessionId: expect.stringMatching(SESSION_ID), expiresAt: expect.stringMatching(ISO), email, sent: true },
      });
      expectExpiry(res.json.data.expiresAt, { before, after });

      const [mail] = await waitForInbox(email);
      expect(mail!.envelopeTo).toEqual([email]);
      expect(mail!.subject).toBe('Your verification code');
      expect(mail!.from).toContain('no-reply@postcode.dev');
      expect(mail!.text).toContain('Use this code to continue:');
      expect(mail!.text).toContain('10 minutes');
      const codeLines = mail!.text.split(/\r?\n/).filter((line) => /^\s*[0-9]+\s*$/.test(line));
      expect(codeLines).toHaveLength(1);
      expect(codeLines[0]!.trim()).toMatch(/^[0-9]{6}$/);
      expect(mail!.html).toContain(codeLines[0]!.trim());

      const ok = await verify(account[kind], { sessionId: res.json.data.sessionId, email, code: codeLines[0]!.trim() });
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual({ success: true, data: { verified: true } });
    });
  }

  it('honours subject, verificationLine, otpDigits 8 and expiresInSeconds 60', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('custom');
    const before = Date.now();
    const res = await send(publicToken, {
      email,
      subject: 'Sign-in code for Acme',
      verificationLine: 'Enter this code to sign in to Acme:',
      otpDigits: 8,
      expiresInSeconds: 60,
    });
    const after = Date.now();
    expect(res.status).toBe(200);
    const expiresAt = Date.parse(res.json.data.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 60_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + 60_000 + 1000);

    const [mail] = await waitForInbox(email);
    expect(mail!.subject).toBe('Sign-in code for Acme');
    expect(mail!.text).toContain('Enter this code to sign in to Acme:');
    expect(mail!.text).not.toContain('Use this code to continue:');
    expect(mail!.text).toContain('1 minute');
    expect(mail!.text).not.toContain('10 minutes');
    const code = await codeFromInbox(email, 8);
    expect(code).toMatch(/^[0-9]{8}$/);

    // A 6-digit guess does not fit an 8-digit session; the 8-digit code verifies.
    expectError(await verify(publicToken, { sessionId: res.json.data.sessionId, email, code: code.slice(0, 6) }), 400, 'INVALID_CODE');
    const ok = await verify(publicToken, { sessionId: res.json.data.sessionId, email, code });
    expect(ok.json).toEqual({ success: true, data: { verified: true } });
  });

  it('accepts the bounds otpDigits 4 and 10, expiresInSeconds 60 and 3600', async () => {
    const { publicToken } = await newAccount();
    for (const [extra, digits] of [
      [{ otpDigits: 4 }, 4],
      [{ otpDigits: 10 }, 10],
      [{ expiresInSeconds: 60 }, 6],
      [{ expiresInSeconds: 3600 }, 6],
    ] as const) {
      const email = uniqueAddress('bounds');
      const res = await send(publicToken, { email, ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(200);
      expect(await codeFromInbox(email, digits)).toMatch(new RegExp(`^[0-9]{${digits}}$`));
    }
  });

  it('400 INVALID_INPUT for otpDigits or expiresInSeconds out of bounds or not numbers; nothing is sent', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('oob');
    const cases = [
      { otpDigits: 3 },
      { otpDigits: 11 },
      { otpDigits: '6' },
      { otpDigits: 6.5 },
      { expiresInSeconds: 59 },
      { expiresInSeconds: 3601 },
      { expiresInSeconds: '600' },
    ];
    for (const extra of cases) {
      for (const path of [SEND, LEGACY_SEND]) {
        const res = await send(publicToken, { email, ...extra }, undefined, path);
        expectError(res, 400, 'INVALID_INPUT');
        expect(res.json.error.message, `${path} ${JSON.stringify(extra)}`).toMatch(/^(otpDigits|expiresInSeconds)/);
      }
    }
    expect(await inbox(email)).toHaveLength(0);
  });

  it('400 INVALID_INPUT for a missing or invalid email and for CR/LF in subject or verificationLine', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('crlf');
    const cases: [unknown, string][] = [
      [{}, 'email'],
      [{ email: 'not-an-address' }, 'email'],
      [{ email: `${email}\r\nRCPT TO:<victim@example.com>` }, 'email'],
      [{ email, subject: 'Code\r\nBcc: victim@example.com' }, 'subject'],
      [{ email, subject: 'Code\nBcc: victim@example.com' }, 'subject'],
      [{ email, verificationLine: 'Your code\r\nBcc: victim@example.com' }, 'verificationLine'],
      [{ email, verificationLine: 'Your code\nis below' }, 'verificationLine'],
    ];
    for (const [body, field] of cases) {
      const res = await send(publicToken, body);
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message.startsWith(field), `${JSON.stringify(body)} → ${res.json.error.message}`).toBe(true);
    }
    expect(await inbox(email)).toHaveLength(0);
  });

  it('sends from the account\'s verified sender when `from` names it', async () => {
    const { publicToken, senderEmail } = await newAccount();
    const email = uniqueAddress('from');
    const res = await send(publicToken, { email, from: senderEmail });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(email);
    expect(mail!.envelopeFrom).toBe(senderEmail);
    expect(mail!.from).toContain(senderEmail);
    expect(mail!.from).not.toContain('no-reply@postcode.dev');
  });

  it('403 SENDER_NOT_VERIFIED when `from` is not a verified sender of the account; nothing is sent', async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const email = uniqueAddress('spoof');
    for (const from of [uniqueAddress('unknown-sender'), other.senderEmail]) {
      expectError(await send(mine.publicToken, { email, from }), 403, 'SENDER_NOT_VERIFIED');
      expectError(await send(mine.serverKey, { email, from }), 403, 'SENDER_NOT_VERIFIED');
    }
    expect(await inbox(email)).toHaveLength(0);
  });

  it('the code never appears in an API response body', async () => {
    const { publicToken, serverKey, analyticsSecret } = await newAccount();
    const email = uniqueAddress('nocode');
    const bodies: unknown[] = [];
    for (const otpDigits of [6, 10]) {
      const res = await send(publicToken, { email, otpDigits });
      bodies.push(res.json);
      const code = await codeFromInbox(email, otpDigits, otpDigits === 6 ? 1 : 2);
      const sessionId = res.json.data.sessionId;
      const responses = [
        res,
        await verify(publicToken, { sessionId, email, code: wrong(code) }),
        await verify(serverKey, { sessionId, email: uniqueAddress('other'), code }),
        await verify(publicToken, { sessionId, email, code: code.slice(1) }),
        await verify(publicToken, { sessionId, email, code }),
        await verify(publicToken, { sessionId, email, code }),
        await history(HISTORY, publicToken, analyticsSecret),
        await history(LEGACY_HISTORY, publicToken, analyticsSecret),
      ];
      expect(responses[4]!.status).toBe(200);
      for (const r of responses) expect(JSON.stringify(r.json), `${r.status} response`).not.toContain(code);
    }
    // Sanity: the send response does carry the session id the checks above looked through.
    expect(JSON.stringify(bodies[0])).toMatch(/otp_[0-9a-f]{64}_[a-z2-7]{26}/);
  });

  it('503 SMTP_NOT_CONFIGURED without SMTP_HOST (instant and legacy)', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('nosmtp');
    for (const path of [SEND, LEGACY_SEND]) {
      const res = await fetchWith({ SMTP_HOST: '' }, 'POST', path, { token: publicToken, body: { email } });
      expectError(res, 503, 'SMTP_NOT_CONFIGURED');
    }
    expect(await inbox(email)).toHaveLength(0);
  });

  it('200 with sent:false when the SMTP server answers 4xx; the session exists', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('tempfail-always');
    const res = await send(publicToken, { email });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ sessionId: expect.stringMatching(SESSION_ID), email, sent: false });
    // A session that did not exist would answer 404; this one counts a wrong code.
    const checked = await verify(publicToken, { sessionId: res.json.data.sessionId, email, code: '000000' });
    expectError(checked, 400, 'INVALID_CODE');
  });

  it('451 once: sent:false, then the queue retry mails a fresh code for the same session, and that code verifies', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('tempfail-once');
    const res = await send(publicToken, { email });
    expect(res.json.data).toMatchObject({ sent: false });
    const code = await codeFromInbox(email);
    const [mail] = await inbox(email);
    expect(mail!.messageId).toContain(res.json.data.sessionId);
    expect((await verify(publicToken, { sessionId: res.json.data.sessionId, email, code })).json).toEqual({
      success: true,
      data: { verified: true },
    });
  });
});

describe('POST /api/v1/otp/send (legacy alias)', () => {
  it('answers exactly sessionId, expiresAt and sent, and the mailed code verifies on both verify routes', async () => {
    const { publicToken, serverKey } = await newAccount();
    const email = uniqueAddress('legacy');
    const before = Date.now();
    const res = await send(publicToken, { email }, undefined, LEGACY_SEND);
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      data: { sessionId: expect.stringMatching(SESSION_ID), expiresAt: expect.stringMatching(ISO), sent: true },
    });
    expect(Object.keys(res.json.data).sort()).toEqual(['expiresAt', 'sent', 'sessionId']);
    expectExpiry(res.json.data.expiresAt, { before, after });
    const code = await codeFromInbox(email, 6);
    const ok = await verify(serverKey, { sessionId: res.json.data.sessionId, email, code }, VERIFY);
    expect(ok.json).toEqual({ success: true, data: { verified: true } });

    const email2 = uniqueAddress('legacy');
    const second = await sendAndRead(serverKey, email2, { otpDigits: 8, expiresInSeconds: 120 }, SEND);
    expect(second.code).toHaveLength(8);
    const ok2 = await verify(publicToken, { sessionId: second.sessionId, email: email2, code: second.code }, LEGACY_VERIFY);
    expect(ok2.json).toEqual({ success: true, data: { verified: true } });
  });
});

describe('public token IP allowlist', () => {
  it('send: 200 from an allowed CF-Connecting-IP; 403 OTP_PUBLIC_IP_NOT_ALLOWED otherwise', async () => {
    const { accountId } = await newAccount();
    const { token } = await restrictedToken(accountId);
    for (const path of [SEND, LEGACY_SEND]) {
      const allowed = await send(token, { email: uniqueAddress('ip') }, { 'CF-Connecting-IP': ALLOWED_IP }, path);
      expect(allowed.status, path).toBe(200);
      expect(allowed.json.data.sessionId).toMatch(SESSION_ID);

      const email = uniqueAddress('ip-blocked');
      const variants: Record<string, string>[] = [
        { 'CF-Connecting-IP': BLOCKED_IP },
        {},
        { 'X-Forwarded-For': ALLOWED_IP, 'CF-Connecting-IP': BLOCKED_IP },
        { 'X-Forwarded-For': ALLOWED_IP },
        { 'X-Real-IP': ALLOWED_IP, 'True-Client-IP': ALLOWED_IP },
      ];
      for (const headers of variants) {
        expectError(await send(token, { email }, headers, path), 403, 'OTP_PUBLIC_IP_NOT_ALLOWED');
      }
      expect(await inbox(email)).toHaveLength(0);
    }
  });

  it('verify is not subject to the allowlist', async () => {
    const { accountId } = await newAccount();
    const { token } = await restrictedToken(accountId);
    const email = uniqueAddress('ip-verify');
    const res = await send(token, { email }, { 'CF-Connecting-IP': ALLOWED_IP });
    expect(res.status).toBe(200);
    const code = await codeFromInbox(email);
    const blockedVerify = await call('POST', VERIFY, {
      token,
      body: { sessionId: res.json.data.sessionId, email, code: wrong(code) },
      headers: { 'CF-Connecting-IP': BLOCKED_IP },
    });
    expectError(blockedVerify, 400, 'INVALID_CODE');
    const ok = await call('POST', LEGACY_VERIFY, {
      token,
      body: { sessionId: res.json.data.sessionId, email, code },
      headers: { 'CF-Connecting-IP': BLOCKED_IP },
    });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ success: true, data: { verified: true } });
  });

  it('a server_otp key is never subject to it', async () => {
    const { accountId, serverKey } = await newAccount();
    await restrictedToken(accountId);
    for (const headers of [{ 'CF-Connecting-IP': BLOCKED_IP }, {}] as Record<string, string>[]) {
      const res = await send(serverKey, { email: uniqueAddress('ip-server') }, headers);
      expect(res.status).toBe(200);
      expect(res.json.data.sent).toBe(true);
    }
  });
});

describe('POST /api/v1/instant-otp/verify', () => {
  it('right code → verified:true; the session is consumed (404 afterwards)', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('verify');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    const ok = await verify(publicToken, { sessionId, email, code });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ success: true, data: { verified: true } });
    expectError(await verify(publicToken, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    expectError(await verify(publicToken, { sessionId, email, code }, LEGACY_VERIFY), 404, 'SESSION_NOT_FOUND');
  });

  it('compares the email case-insensitively', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('case');
    const first = await sendAndRead(publicToken, email);
    const up = await verify(publicToken, { sessionId: first.sessionId, email: email.toUpperCase(), code: first.code });
    expect(up.json).toEqual({ success: true, data: { verified: true } });

    const mixed = `MiXeD.${crypto.randomUUID().slice(0, 8)}@Example.com`;
    const res = await send(publicToken, { email: mixed });
    expect(res.status).toBe(200);
    const code = await codeFromInbox(mixed.toLowerCase());
    const low = await verify(publicToken, { sessionId: res.json.data.sessionId, email: mixed.toLowerCase(), code });
    expect(low.json).toEqual({ success: true, data: { verified: true } });
  });

  it('wrong code → 400 INVALID_CODE, one attempt used; the right code still verifies after 4 wrong ones', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('wrong');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    expectError(await verify(publicToken, { sessionId, email, code: wrong(code) }), 400, 'INVALID_CODE');
    expect(await storedRows(sessionId)).toEqual([{ attempts: 1 }]);
    for (let i = 0; i < 3; i++) expectError(await verify(publicToken, { sessionId, email, code: wrong(code) }), 400, 'INVALID_CODE');
    expect(await storedRows(sessionId)).toEqual([{ attempts: 4 }]);
    const ok = await verify(publicToken, { sessionId, email, code });
    expect(ok.json).toEqual({ success: true, data: { verified: true } });
  });

  it('a code of the wrong length or with non-digits → 400 INVALID_CODE without using an attempt', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('malformed');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    const malformed = [
      code.slice(0, 5),
      `${code}1`,
      'abcdef',
      `${code.slice(0, 5)}a`,
      '',
      ` ${code.slice(1)}`,
      '１２３４５６',
      '12345678901',
      '-12345',
      '1234.5',
    ];
    expect(malformed).toHaveLength(10);
    for (const bad of malformed) {
      const res = await verify(publicToken, { sessionId, email, code: bad });
      expectError(res, 400, 'INVALID_CODE');
    }
    expect(await storedRows(sessionId)).toEqual([{ attempts: 0 }]);
    const ok = await verify(publicToken, { sessionId, email, code });
    expect(ok.json).toEqual({ success: true, data: { verified: true } });
  });

  it('another email with the right code → 400 INVALID_CODE (an attempt is used)', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('email-a');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    expectError(await verify(publicToken, { sessionId, email: uniqueAddress('email-b'), code }), 400, 'INVALID_CODE');
    expect(await storedRows(sessionId)).toEqual([{ attempts: 1 }]);
    expect((await verify(publicToken, { sessionId, email, code })).json).toEqual({ success: true, data: { verified: true } });
  });

  it('after 5 wrong codes the right code → 429 RATE_LIMITED with Retry-After (locked)', async () => {
    const { publicToken, serverKey } = await newAccount();
    const email = uniqueAddress('lock');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    for (let i = 0; i < 5; i++) expectError(await verify(publicToken, { sessionId, email, code: wrong(code) }), 400, 'INVALID_CODE');
    for (const [token, path] of [
      [publicToken, VERIFY],
      [serverKey, LEGACY_VERIFY],
    ] as const) {
      const locked = await verify(token, { sessionId, email, code }, path);
      expectError(locked, 429, 'RATE_LIMITED');
      expectRetryAfter(locked, 600);
    }
    expectError(await verify(publicToken, { sessionId, email, code: wrong(code) }), 429, 'RATE_LIMITED');
    // Locked and then expired → 404.
    await expireSession(sessionId);
    expectError(await verify(publicToken, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
  });

  it('404 SESSION_NOT_FOUND for unknown, malformed and other-account session ids', async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const email = uniqueAddress('unknown');
    const { sessionId, code } = await sendAndRead(other.publicToken, email);
    for (const id of [unknownSessionId(), 'otp_aaaaaaaaaaaaaaaaaaaaaaaaaa', 'otp_abc', 'abc', sessionId.toUpperCase(), `${sessionId}x`, 'em_aaaaaaaaaaaaaaaaaaaa']) {
      expectError(await verify(mine.publicToken, { sessionId: id, email, code }), 404, 'SESSION_NOT_FOUND');
    }
    expectError(await verify(mine.publicToken, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    expectError(await verify(mine.serverKey, { sessionId, email, code }, LEGACY_VERIFY), 404, 'SESSION_NOT_FOUND');
    // The other account's failed lookups did not use up the session.
    expect(await storedRows(sessionId)).toEqual([{ attempts: 0 }]);
    expect((await verify(other.publicToken, { sessionId, email, code })).json).toEqual({ success: true, data: { verified: true } });
  });

  it('a session sent with a public token verifies with a server_otp key of the same account', async () => {
    const { publicToken, serverKey, bothKey } = await newAccount();
    const a = uniqueAddress('cross');
    const first = await sendAndRead(publicToken, a);
    expect((await verify(serverKey, { sessionId: first.sessionId, email: a, code: first.code })).json).toEqual({
      success: true,
      data: { verified: true },
    });
    const b = uniqueAddress('cross');
    const second = await sendAndRead(serverKey, b);
    expect((await verify(publicToken, { sessionId: second.sessionId, email: b, code: second.code })).json).toEqual({
      success: true,
      data: { verified: true },
    });
    const c = uniqueAddress('cross');
    const third = await sendAndRead(bothKey, c);
    expect((await verify(bothKey, { sessionId: third.sessionId, email: c, code: third.code })).status).toBe(200);
  });

  it('a backend-otp session cannot be verified on the instant routes (404)', async () => {
    const { serverKey, publicToken } = await newAccount();
    const email = uniqueAddress('backend-on-instant');
    const res = await call('POST', '/api/v1/backend-otp/send', { token: serverKey, body: { email } });
    expect(res.status).toBe(200);
    const code = await codeFromInbox(email);
    const sessionId = res.json.data.sessionId;
    expectError(await verify(serverKey, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    expectError(await verify(publicToken, { sessionId, email, code }, LEGACY_VERIFY), 404, 'SESSION_NOT_FOUND');
    // Still pending on its own route.
    const ok = await call('POST', '/api/v1/backend-otp/verify', { token: serverKey, body: { sessionId, email, code } });
    expect(ok.json).toEqual({ success: true, data: { verified: true } });
  });

  it('400 INVALID_INPUT when sessionId, email or code is missing or not a string', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('verify-input');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    for (const body of [
      { email, code },
      { sessionId, code },
      { sessionId, email },
      { sessionId, email, code: Number(code) },
      { sessionId: 42, email, code },
    ]) {
      expectError(await verify(publicToken, body), 400, 'INVALID_INPUT');
    }
    expect((await verify(publicToken, { sessionId, email, code })).status).toBe(200);
  });
});

describe('concurrent verifies', () => {
  it('20 parallel verifies with the right code → exactly one verified:true, the rest 404 or 400', async () => {
    const { publicToken, analyticsSecret } = await newAccount();
    const email = uniqueAddress('race');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    const results = await Promise.all(Array.from({ length: 20 }, () => verify(publicToken, { sessionId, email, code })));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.json).toEqual({ success: true, data: { verified: true } });
    for (const r of results.filter((r) => r.status !== 200)) {
      expect([404, 400], JSON.stringify(r.json)).toContain(r.status);
      expect(['SESSION_NOT_FOUND', 'INVALID_CODE']).toContain(r.json.error.code);
    }
    const list = await history(HISTORY, publicToken, analyticsSecret);
    expect(list.json.data.verifications).toHaveLength(1);
  });

  it('50 parallel wrong codes → 5 INVALID_CODE, the rest 429; then the right code → 429', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('race-wrong');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    const results = await Promise.all(Array.from({ length: 50 }, () => verify(publicToken, { sessionId, email, code: wrong(code) })));
    const invalid = results.filter((r) => r.status === 400);
    const limited = results.filter((r) => r.status === 429);
    for (const r of invalid) expect(r.json.error.code).toBe('INVALID_CODE');
    for (const r of limited) expect(r.json.error.code).toBe('RATE_LIMITED');
    expect(invalid.length).toBeLessThanOrEqual(5);
    expect(invalid).toHaveLength(5);
    expect(invalid.length + limited.length).toBe(50);
    expect(await storedRows(sessionId)).toEqual([{ attempts: 5 }]);
    const after = await verify(publicToken, { sessionId, email, code });
    expectError(after, 429, 'RATE_LIMITED');
    expectRetryAfter(after, 600);
  });
});

describe('expiry', () => {
  it('an expired session → 404 even with the right code', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('expired');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    await expireSession(sessionId);
    expectError(await verify(publicToken, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    expectError(await verify(publicToken, { sessionId, email, code }, LEGACY_VERIFY), 404, 'SESSION_NOT_FOUND');
  });

  it('the alarm deletes a session once its keep time after expiry is over; verify → 404', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('alarm');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    expect(await storedRows(sessionId)).toHaveLength(1);
    await expireSession(sessionId, KEEP_AFTER_EXPIRY_MS + 60_000);
    expect(await runDurableObjectAlarm(sessionStub(sessionId))).toBe(true);
    expect(await storedRows(sessionId)).toHaveLength(0);
    expectError(await verify(publicToken, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
  });
});

describe('GET /api/v1/instant-otp/verifications and /api/v1/otp/verifications', () => {
  it('lists only verified sessions of the account, newest first (legacy without sentAt)', async () => {
    const { publicToken, serverKey, analyticsSecret } = await newAccount();
    const other = await newAccount();
    const a = uniqueAddress('hist-a');
    const b = uniqueAddress('hist-b');
    const c = uniqueAddress('hist-c');
    const first = await sendAndRead(publicToken, a);
    const second = await sendAndRead(serverKey, b, {}, LEGACY_SEND);
    await sendAndRead(publicToken, c); // never verified
    const d = uniqueAddress('hist-d');
    const wrongOnly = await sendAndRead(publicToken, d);
    expectError(await verify(publicToken, { sessionId: wrongOnly.sessionId, email: d, code: wrong(wrongOnly.code) }), 400, 'INVALID_CODE');

    expect((await verify(publicToken, { sessionId: first.sessionId, email: a, code: first.code })).status).toBe(200);
    await sleep(20);
    expect((await verify(serverKey, { sessionId: second.sessionId, email: b, code: second.code }, LEGACY_VERIFY)).status).toBe(200);
    // Verified on another account: not listed here.
    const e = uniqueAddress('hist-e');
    const foreign = await sendAndRead(other.publicToken, e);
    expect((await verify(other.publicToken, { sessionId: foreign.sessionId, email: e, code: foreign.code })).status).toBe(200);

    const list = await history(HISTORY, publicToken, analyticsSecret);
    expect(list.status).toBe(200);
    expect(list.json.success).toBe(true);
    const entries = list.json.data.verifications;
    expect(entries.map((v: { email: string }) => v.email)).toEqual([b, a]);
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(['email', 'id', 'sentAt', 'verifiedAt']);
      expect(entry.id).toEqual(expect.any(String));
      expect(entry.sentAt).toMatch(ISO);
      expect(entry.verifiedAt).toMatch(ISO);
      expect(Date.parse(entry.sentAt)).toBeLessThanOrEqual(Date.parse(entry.verifiedAt));
    }
    expect(Date.parse(entries[0].verifiedAt)).toBeGreaterThan(Date.parse(entries[1].verifiedAt));

    const legacy = await history(LEGACY_HISTORY, publicToken, analyticsSecret);
    expect(legacy.status).toBe(200);
    expect(legacy.json.data.verifications).toEqual(
      entries.map(({ id, email, verifiedAt }: { id: string; email: string; verifiedAt: string }) => ({ id, email, verifiedAt })),
    );
    for (const entry of legacy.json.data.verifications) expect(Object.keys(entry).sort()).toEqual(['email', 'id', 'verifiedAt']);
  });

  describe('limit is clamped to 1-100 (default 50)', () => {
    // 120 verifications of one account, seeded straight into D1 (a minute apart).
    let account: TestAccount;
    let rows: SeededVerification[] = [];
    beforeAll(async () => {
      account = await newAccount('history limits');
      rows = await seedVerifications(account.accountId, 'instant', 120, 'seed');
    });
    const newest = (n: number) => rows.slice(-n).reverse().map((r) => r.email);
    const cases: [string, number][] = [
      ['', 50],
      ['?limit=1', 1],
      ['?limit=7', 7],
      ['?limit=100', 100],
      ['?limit=101', 100],
      ['?limit=500', 100],
      ['?limit=-5', 1],
      ['?limit=0', 1],
    ];
    for (const path of [HISTORY, LEGACY_HISTORY]) {
      for (const [query, max] of cases) {
        it(`${path}${query} → the newest ${max}`, async () => {
          const res = await history(`${path}${query}`, account.publicToken, account.analyticsSecret);
          expect(res.status).toBe(200);
          const emails = res.json.data.verifications.map((v: { email: string }) => v.email);
          expect(emails.length).toBeLessThanOrEqual(max);
          expect(emails).toEqual(newest(max));
        });
      }
    }
  });

  for (const path of [HISTORY, LEGACY_HISTORY]) {
    it(`${path}: public token plus its own X-Otp-Secret required`, async () => {
      const account = await newAccount();
      const other = await newAccount();
      const second = await admin('POST', `/admin/v1/accounts/${account.accountId}/otp-tokens`, {});
      const { token: restricted, analyticsSecret: restrictedSecret } = await restrictedToken(account.accountId);

      expect((await history(path, account.publicToken, account.analyticsSecret)).status).toBe(200);
      expectError(await history(path, account.publicToken, null), 401, 'UNAUTHORIZED');
      expectError(await history(path, account.publicToken, ''), 401, 'UNAUTHORIZED');
      expectError(await history(path, null, account.analyticsSecret), 401, 'UNAUTHORIZED');
      expectError(await history(path, account.publicToken, 'pc_otp_sec_wrongwrongwrongwrongwrongwrong'), 401, 'UNAUTHORIZED');
      expectError(await history(path, account.publicToken, second.json.data.analyticsSecret), 401, 'UNAUTHORIZED');
      expectError(await history(path, account.publicToken, other.analyticsSecret), 401, 'UNAUTHORIZED');
      expectError(await history(path, second.json.data.token, account.analyticsSecret), 401, 'UNAUTHORIZED');
      expectError(await history(path, 'pc_otp_unknownunknownunknownunknown', account.analyticsSecret), 401, 'UNAUTHORIZED');
      expectError(await history(path, account.publicToken, account.publicToken), 401, 'UNAUTHORIZED');

      expectError(await history(path, account.serverKey, account.analyticsSecret), 403, 'SCOPE_REQUIRED');
      expectError(await history(path, account.mailKey, account.analyticsSecret), 403, 'SCOPE_REQUIRED');
      expectError(await history(path, account.bothKey, account.analyticsSecret), 403, 'SCOPE_REQUIRED');

      expect((await history(path, restricted, restrictedSecret, { 'CF-Connecting-IP': ALLOWED_IP })).status).toBe(200);
      expectError(await history(path, restricted, restrictedSecret, { 'CF-Connecting-IP': BLOCKED_IP }), 403, 'OTP_PUBLIC_IP_NOT_ALLOWED');
      expectError(await history(path, restricted, restrictedSecret), 403, 'OTP_PUBLIC_IP_NOT_ALLOWED');
      expectError(
        await history(path, restricted, restrictedSecret, { 'CF-Connecting-IP': BLOCKED_IP, 'X-Forwarded-For': ALLOWED_IP }),
        403,
        'OTP_PUBLIC_IP_NOT_ALLOWED',
      );
    });
  }
});

describe('OTP send rate limits', () => {
  it('per recipient: the 6th send to one address within 10 minutes → 429 OTP_RATE_LIMITED; another address is fine', async () => {
    const { publicToken, serverKey } = await newAccount();
    const other = await newAccount();
    const email = uniqueAddress('per-recipient');
    // Counted per account and address, whichever credential sends.
    for (const token of [publicToken, publicToken, serverKey, publicToken, serverKey]) {
      expect((await send(token, { email })).status).toBe(200);
    }
    for (const [token, path] of [
      [publicToken, SEND],
      [serverKey, SEND],
      [publicToken, LEGACY_SEND],
    ] as const) {
      const limited = await send(token, { email }, undefined, path);
      expectError(limited, 429, 'OTP_RATE_LIMITED');
      expectRetryAfter(limited, 600);
    }
    expect(await waitForInbox(email, 5)).toHaveLength(5);
    expect((await send(publicToken, { email: uniqueAddress('per-recipient') })).status).toBe(200);
    // Another account sending to the same address has its own count.
    expect((await send(other.publicToken, { email })).status).toBe(200);
  });

  it('refused sends (403 SENDER_NOT_VERIFIED) do not count toward the per-recipient limit', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('per-recipient-refused');
    for (let i = 0; i < 5; i++) {
      expectError(await send(publicToken, { email, from: uniqueAddress('not-a-sender') }), 403, 'SENDER_NOT_VERIFIED');
    }
    for (let i = 0; i < 5; i++) expect((await send(publicToken, { email })).status).toBe(200);
    expectError(await send(publicToken, { email }), 429, 'OTP_RATE_LIMITED');
  });

  it('per recipient: 20 failed verifies within an hour → 429 RATE_LIMITED on every session to that address, even with the right code', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('fails');
    const sessions: { sessionId: string; code: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await send(publicToken, { email });
      expect(res.status).toBe(200);
      sessions.push({ sessionId: res.json.data.sessionId, code: await codeFromInbox(email, 6, i + 1) });
    }
    // 4 sessions × 5 wrong codes = 20 failures (each of these sessions is now locked).
    for (const s of sessions.slice(0, 4)) {
      for (let i = 0; i < 5; i++) expectError(await verify(publicToken, { sessionId: s.sessionId, email, code: wrong(s.code) }), 400, 'INVALID_CODE');
    }
    const fresh = sessions[4]!;
    const limited = await verify(publicToken, { sessionId: fresh.sessionId, email, code: fresh.code });
    expectError(limited, 429, 'RATE_LIMITED');
    expectRetryAfter(limited, 3600);
    // Another address of the same account is not affected.
    const other = uniqueAddress('fails-other');
    const ok = await sendAndRead(publicToken, other);
    expect((await verify(publicToken, { sessionId: ok.sessionId, email: other, code: ok.code })).json).toEqual({
      success: true,
      data: { verified: true },
    });
  });

  it('per credential: RATE_OTP_SEND_PER_CREDENTIAL=2 → the third send → 429 OTP_RATE_LIMITED', async () => {
    const { publicToken, serverKey } = await newAccount();
    const vars = { RATE_OTP_SEND_PER_CREDENTIAL: '2' };
    for (let i = 0; i < 2; i++) {
      expect((await fetchWith(vars, 'POST', SEND, { token: publicToken, body: { email: uniqueAddress('per-cred') } })).status).toBe(200);
    }
    const email = uniqueAddress('per-cred');
    for (const path of [SEND, LEGACY_SEND]) {
      const limited = await fetchWith(vars, 'POST', path, { token: publicToken, body: { email } });
      expectError(limited, 429, 'OTP_RATE_LIMITED');
      expectRetryAfter(limited, 60);
    }
    expect(await inbox(email)).toHaveLength(0);
    // Another credential of the same account has its own bucket.
    expect((await fetchWith(vars, 'POST', SEND, { token: serverKey, body: { email } })).status).toBe(200);
  });
});

describe('CORS on the instant and legacy routes', () => {
  const preflight = (path: string, origin: string) =>
    call('OPTIONS', path, {
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': path.endsWith('verifications') ? 'GET' : 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type, x-otp-secret',
      },
    });

  for (const path of [SEND, VERIFY, HISTORY, LEGACY_SEND, LEGACY_VERIFY, LEGACY_HISTORY]) {
    it(`OPTIONS ${path} from any origin → 204, Allow-Origin *, no credentials`, async () => {
      for (const origin of ['https://shop.example', 'http://localhost:3000']) {
        const res = await preflight(path, origin);
        expect(res.status).toBe(204);
        expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
        const allowed = (res.headers.get('Access-Control-Allow-Headers') ?? '').split(',').map((h) => h.trim().toLowerCase());
        expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-otp-secret']));
        expect(res.headers.get('Access-Control-Allow-Credentials')).toBeNull();
      }
    });
  }

  it('a POST from an Origin gets Access-Control-Allow-Origin *, also on errors', async () => {
    const { publicToken } = await newAccount();
    const ok = await call('POST', SEND, { token: publicToken, body: { email: uniqueAddress('cors') }, headers: { Origin: 'https://shop.example' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('Access-Control-Allow-Origin')).toBe('*');
    expect(ok.headers.get('Access-Control-Allow-Credentials')).toBeNull();
    const bad = await call('POST', VERIFY, {
      token: publicToken,
      body: { sessionId: 'otp_aaaaaaaaaaaaaaaaaaaaaaaaaa', email: 'a@example.com', code: '123456' },
      headers: { Origin: 'https://shop.example' },
    });
    expect(bad.status).toBe(404);
    expect(bad.headers.get('Access-Control-Allow-Origin')).toBe('*');
  });

  it('/api/v1/emails and /api/v1/backend-otp/send send no CORS headers', async () => {
    const { mailKey, serverKey } = await newAccount();
    for (const path of ['/api/v1/emails', '/api/v1/backend-otp/send']) {
      const pre = await preflight(path, 'https://shop.example');
      expect(pre.headers.get('Access-Control-Allow-Origin'), `OPTIONS ${path}`).toBeNull();
      expect(pre.headers.get('Access-Control-Allow-Headers'), `OPTIONS ${path}`).toBeNull();
    }
    const mail = await call('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: uniqueAddress('nocors'), subject: 's', text: 't' },
      headers: { Origin: 'https://shop.example' },
    });
    expect(mail.status).toBe(200);
    expect(mail.headers.get('Access-Control-Allow-Origin')).toBeNull();
    const backend = await call('POST', '/api/v1/backend-otp/send', {
      token: serverKey,
      body: { email: uniqueAddress('nocors') },
      headers: { Origin: 'https://shop.example' },
    });
    expect(backend.status).toBe(200);
    expect(backend.headers.get('Access-Control-Allow-Origin')).toBeNull();
  });
});

