// Backend OTP (routes 13-15): server to server with a server_otp key; interface-v1.md endpoints 13-15,
// decisions.md "One-time codes" and "Rate limits".
import { beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  call,
  codeFromInbox,
  expectError,
  expectFieldErrors,
  inbox,
  newAccount,
  postWith,
  type TestAccount,
  uniqueAddress,
  waitForInbox,
} from '../../support/api';
import {
  expectExpiry,
  ISO,
  SESSION_ID,
  type SeededVerification,
  seedVerifications,
  sendAndRead as sendCodeAndRead,
  unknownSessionId,
  wrongCode,
} from '../../support/otp';
import type { EmailVerificationSent, OtpSent, VerificationList, Verified } from '../../support/responses';

const SEND = '/api/v1/backend-otp/send';
const VERIFY = '/api/v1/backend-otp/verify';
const HISTORY = '/api/v1/backend-otp/verifications';

const BLOCKED_IP = '198.51.100.1';

const send = (token: string, body: unknown, headers?: Record<string, string>) =>
  call<OtpSent>('POST', SEND, { token, body, headers });
const verify = (token: string, body: unknown, path = VERIFY) => call<Verified>('POST', path, { token, body });
const verified = { success: true, data: { verified: true } };

const sendAndRead = (token: string, email: string, extra: Record<string, unknown> = {}) =>
  sendCodeAndRead(SEND, token, email, extra);

const wrong = wrongCode;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('POST /api/v1/backend-otp/send', () => {
  it('sends a 6-digit code (10 minutes) that verifies on the backend route', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('backend');
    const before = Date.now();
    const res = await send(serverKey, { email });
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      data: { sessionId: expect.stringMatching(SESSION_ID), expiresAt: expect.stringMatching(ISO), email, sent: true },
    });
    expectExpiry(res.json.data.expiresAt, { before, after });

    const [mail] = await waitForInbox(email);
    expect(mail!.subject).toBe('Your verification code');
    expect(mail!.text).toContain('10 minutes');
    const code = await codeFromInbox(email);
    expect(JSON.stringify(res.json)).not.toContain(code);

    const ok = await verify(serverKey, { sessionId: res.json.data.sessionId, email, code });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual(verified);
  });

  it('honours subject, verificationLine, otpDigits and expiresInSeconds; accepts their bounds', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('backend-custom');
    const res = await send(serverKey, {
      email,
      subject: 'Your Acme login code',
      verificationLine: 'Type this into Acme:',
      otpDigits: 10,
      expiresInSeconds: 3600,
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(email);
    expect(mail!.subject).toBe('Your Acme login code');
    expect(mail!.text).toContain('Type this into Acme:');
    expect(mail!.text).toContain('60 minutes');
    const code = await codeFromInbox(email, 10);
    expect((await verify(serverKey, { sessionId: res.json.data.sessionId, email, code })).json).toEqual(verified);

    for (const [extra, digits] of [
      [{ otpDigits: 4 }, 4],
      [{ expiresInSeconds: 60 }, 6],
    ] as const) {
      const to = uniqueAddress('backend-bounds');
      expect((await send(serverKey, { email: to, ...extra })).status).toBe(200);
      expect(await codeFromInbox(to, digits)).toMatch(new RegExp(`^[0-9]{${digits}}$`));
    }
  });

  it('400 INVALID_INPUT for out-of-bounds otpDigits / expiresInSeconds, CR/LF and bad emails; nothing is sent', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('backend-oob');
    const cases: [unknown, string][] = [
      [{ email, otpDigits: 3 }, 'otpDigits'],
      [{ email, otpDigits: 11 }, 'otpDigits'],
      [{ email, otpDigits: '6' }, 'otpDigits'],
      [{ email, expiresInSeconds: 59 }, 'expiresInSeconds'],
      [{ email, expiresInSeconds: 3601 }, 'expiresInSeconds'],
      [{ email, expiresInSeconds: 90.5 }, 'expiresInSeconds'],
      [{ email, subject: 'a\r\nBcc: victim@example.com' }, 'subject'],
      [{ email, verificationLine: 'a\nb' }, 'verificationLine'],
      [{ email: 'nope' }, 'email'],
      [{}, 'email'],
    ];
    await expectFieldErrors((body) => send(serverKey, body), cases);
    expect(await inbox(email)).toHaveLength(0);
  });

  it('no IP allowlist applies to a server key (even when the account has a restricted public token)', async () => {
    const { accountId, serverKey } = await newAccount();
    const token = await admin('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, { allowedIps: ['203.0.113.0/24'] });
    expect(token.status).toBe(201);
    const email = uniqueAddress('backend-ip');
    const res = await send(serverKey, { email }, { 'CF-Connecting-IP': BLOCKED_IP });
    expect(res.status).toBe(200);
    expect(res.json.data.sent).toBe(true);
    const code = await codeFromInbox(email);
    const ok = await call('POST', VERIFY, {
      token: serverKey,
      body: { sessionId: res.json.data.sessionId, email, code },
      headers: { 'CF-Connecting-IP': BLOCKED_IP },
    });
    expect(ok.json).toEqual(verified);
    const list = await call('GET', HISTORY, { token: serverKey, headers: { 'CF-Connecting-IP': BLOCKED_IP } });
    expect(list.status).toBe(200);
  });

  it('403 SCOPE_REQUIRED for a public token and a mail key; nothing is sent', async () => {
    const { publicToken, mailKey } = await newAccount();
    const email = uniqueAddress('backend-scope');
    expectError(await send(publicToken, { email }), 403, 'SCOPE_REQUIRED');
    expectError(await send(mailKey, { email }), 403, 'SCOPE_REQUIRED');
    expect(await inbox(email)).toHaveLength(0);
  });

  it('429 RATE_LIMITED (not OTP_RATE_LIMITED) on the 6th send to one recipient; another address is fine', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('backend-rate');
    for (let i = 0; i < 5; i++) expect((await send(serverKey, { email })).status).toBe(200);
    const limited = await send(serverKey, { email });
    expectError(limited, 429, 'RATE_LIMITED');
    const retryAfter = limited.headers.get('Retry-After');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(600);
    expect(await waitForInbox(email, 5)).toHaveLength(5);
    expect((await send(serverKey, { email: uniqueAddress('backend-rate') })).status).toBe(200);
  });

  it('429 RATE_LIMITED per credential when RATE_OTP_SEND_PER_CREDENTIAL is 2', async () => {
    const { serverKey } = await newAccount();
    const vars = { RATE_OTP_SEND_PER_CREDENTIAL: '2' };
    for (let i = 0; i < 2; i++)
      expect((await postWith(vars, SEND, serverKey, { email: uniqueAddress('backend-cred') })).status).toBe(200);
    const limited = await postWith(vars, SEND, serverKey, { email: uniqueAddress('backend-cred') });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers.get('Retry-After')).toMatch(/^[1-9]\d*$/);
  });

  it('OTP mail goes out while the service is frozen', async () => {
    const { serverKey } = await newAccount();
    expect((await admin('PUT', '/admin/v1/settings', { frozen: true })).status).toBe(200);
    try {
      const email = uniqueAddress('backend-frozen');
      const res = await send(serverKey, { email });
      expect(res.status).toBe(200);
      expect(res.json.data.sent).toBe(true);
      const code = await codeFromInbox(email);
      expect((await verify(serverKey, { sessionId: res.json.data.sessionId, email, code })).json).toEqual(verified);
    } finally {
      expect((await admin('PUT', '/admin/v1/settings', { frozen: false })).status).toBe(200);
    }
  });

  it('503 SMTP_NOT_CONFIGURED without SMTP_HOST', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('backend-nosmtp');
    expectError(await postWith({ SMTP_HOST: '' }, SEND, serverKey, { email }), 503, 'SMTP_NOT_CONFIGURED');
    expect(await inbox(email)).toHaveLength(0);
  });

  it('200 with sent:false when the SMTP server answers 4xx; the session exists', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('tempfail-always');
    const res = await send(serverKey, { email });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ email, sent: false });
    expectError(
      await verify(serverKey, { sessionId: res.json.data.sessionId, email, code: '000000' }),
      400,
      'INVALID_CODE',
    );
  });
});

describe('POST /api/v1/backend-otp/verify', () => {
  it('consumes the session: the same code again → 404', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('backend-consume');
    const { sessionId, code } = await sendAndRead(serverKey, email);
    expect((await verify(serverKey, { sessionId, email: email.toUpperCase(), code })).json).toEqual(verified);
    expectError(await verify(serverKey, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
  });

  it('wrong code or other email → 400 INVALID_CODE; malformed codes use no attempt; 5 wrong → 429 even with the right code', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('backend-wrong');
    const { sessionId, code } = await sendAndRead(serverKey, email);
    for (const bad of [
      '12345',
      '1234567',
      'abcdef',
      '',
      '12 345',
      '12345x',
      '0x1234',
      '1e5000',
      '１２３４５６',
      '99999999999',
    ]) {
      expectError(await verify(serverKey, { sessionId, email, code: bad }), 400, 'INVALID_CODE');
    }
    expectError(
      await verify(serverKey, { sessionId, email: uniqueAddress('backend-other'), code }),
      400,
      'INVALID_CODE',
    );
    for (let i = 0; i < 3; i++)
      expectError(await verify(serverKey, { sessionId, email, code: wrong(code) }), 400, 'INVALID_CODE');
    // 4 attempts used (the 10 malformed codes used none): the right code still verifies.
    expect((await verify(serverKey, { sessionId, email, code })).json).toEqual(verified);

    const email2 = uniqueAddress('backend-lock');
    const second = await sendAndRead(serverKey, email2);
    for (let i = 0; i < 5; i++) {
      expectError(
        await verify(serverKey, { sessionId: second.sessionId, email: email2, code: wrong(second.code) }),
        400,
        'INVALID_CODE',
      );
    }
    const locked = await verify(serverKey, { sessionId: second.sessionId, email: email2, code: second.code });
    expectError(locked, 429, 'RATE_LIMITED');
    expect(locked.headers.get('Retry-After')).toMatch(/^[1-9]\d*$/);
  });

  it("404 SESSION_NOT_FOUND for unknown ids, another account's session and sessions of the other flavours", async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const email = uniqueAddress('backend-404');
    const foreign = await sendAndRead(other.serverKey, email);
    expectError(
      await verify(mine.serverKey, { sessionId: foreign.sessionId, email, code: foreign.code }),
      404,
      'SESSION_NOT_FOUND',
    );
    for (const sessionId of [unknownSessionId(), 'otp_aaaaaaaaaaaaaaaaaaaaaaaaaa', 'nope']) {
      expectError(await verify(mine.serverKey, { sessionId, email, code: '123456' }), 404, 'SESSION_NOT_FOUND');
    }
    // The foreign lookup did not touch the owner's session.
    expect((await verify(other.serverKey, { sessionId: foreign.sessionId, email, code: foreign.code })).json).toEqual(
      verified,
    );

    const instantEmail = uniqueAddress('backend-instant');
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

    const evEmail = uniqueAddress('backend-ev');
    const ev = await call<EmailVerificationSent>('POST', '/api/v1/email-verification/send', {
      token: mine.serverKey,
      body: { email: evEmail },
    });
    const evCode = await codeFromInbox(evEmail);
    expectError(
      await verify(mine.serverKey, { sessionId: ev.json.data.sessionId, email: evEmail, code: evCode }),
      404,
      'SESSION_NOT_FOUND',
    );
    // A backend session is not verifiable on the email-verification route either.
    const ownEmail = uniqueAddress('backend-own');
    const own = await sendAndRead(mine.serverKey, ownEmail);
    expectError(
      await verify(
        mine.serverKey,
        { sessionId: own.sessionId, email: ownEmail, code: own.code },
        '/api/v1/email-verification/verify',
      ),
      404,
      'SESSION_NOT_FOUND',
    );
  });
});

describe('GET /api/v1/backend-otp/verifications', () => {
  it('lists verified backend sessions newest first, separate from the instant history', async () => {
    const { serverKey, publicToken, analyticsSecret } = await newAccount();
    const a = uniqueAddress('bh-a');
    const b = uniqueAddress('bh-b');
    const first = await sendAndRead(serverKey, a);
    const second = await sendAndRead(serverKey, b);
    await sendAndRead(serverKey, uniqueAddress('bh-pending'));
    expect((await verify(serverKey, { sessionId: first.sessionId, email: a, code: first.code })).status).toBe(200);
    await sleep(20);
    expect((await verify(serverKey, { sessionId: second.sessionId, email: b, code: second.code })).status).toBe(200);

    // An instant verification of the same account.
    const i = uniqueAddress('bh-instant');
    const instant = await call<OtpSent>('POST', '/api/v1/instant-otp/send', { token: serverKey, body: { email: i } });
    const instantCode = await codeFromInbox(i);
    expect(
      (
        await verify(
          serverKey,
          { sessionId: instant.json.data.sessionId, email: i, code: instantCode },
          '/api/v1/instant-otp/verify',
        )
      ).status,
    ).toBe(200);

    const list = await call<VerificationList>('GET', HISTORY, { token: serverKey });
    expect(list.status).toBe(200);
    const entries = list.json.data.verifications;
    expect(entries.map((v) => v.email)).toEqual([b, a]);
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(['email', 'id', 'sentAt', 'verifiedAt']);
      expect(entry.sentAt).toMatch(ISO);
      expect(entry.verifiedAt).toMatch(ISO);
    }

    const instantList = await call<VerificationList>('GET', '/api/v1/instant-otp/verifications', {
      token: publicToken,
      headers: { 'X-Otp-Secret': analyticsSecret },
    });
    expect(instantList.json.data.verifications.map((v) => v.email)).toEqual([i]);
  });

  it('another account sees none of them', async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const email = uniqueAddress('bh-foreign');
    const s = await sendAndRead(mine.serverKey, email);
    expect((await verify(mine.serverKey, { sessionId: s.sessionId, email, code: s.code })).status).toBe(200);
    const list = await call<VerificationList>('GET', HISTORY, { token: other.serverKey });
    expect(list.status).toBe(200);
    expect(list.json.data.verifications).toEqual([]);
  });

  describe('limit is clamped to 1-100 (default 50)', () => {
    let account: TestAccount;
    let rows: SeededVerification[] = [];
    beforeAll(async () => {
      account = await newAccount('backend history limits');
      rows = await seedVerifications(account.accountId, 'backend', 120, 'bseed');
    });
    const newest = (n: number) =>
      rows
        .slice(-n)
        .reverse()
        .map((r) => r.email);
    for (const [query, max] of [
      ['', 50],
      ['?limit=3', 3],
      ['?limit=100', 100],
      ['?limit=500', 100],
      ['?limit=5000', 100],
      ['?limit=0', 1],
      ['?limit=-3', 1],
    ] as const) {
      it(`${HISTORY}${query} → the newest ${max}`, async () => {
        const res = await call<VerificationList>('GET', `${HISTORY}${query}`, { token: account.serverKey });
        expect(res.status).toBe(200);
        const emails = res.json.data.verifications.map((v) => v.email);
        expect(emails.length).toBeLessThanOrEqual(max);
        expect(emails).toEqual(newest(max));
      });
    }
    it(`${HISTORY}?limit=abc → 400 INVALID_INPUT naming limit (not a whole number)`, async () => {
      const res = await call('GET', `${HISTORY}?limit=abc`, { token: account.serverKey });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toMatch(/^limit: /);
    });
  });
});
