// Instant OTP send (route 7, interface-v1.md endpoint 7): codes for a public token or a server_otp key, the
// public token's IP allowlist, the send limits and CORS; decisions.md "Authentication", "One-time codes",
// "Rate limits". Verify and history (routes 8, 9): instant-otp-verify.test.ts; legacy aliases: legacy-otp.test.ts.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  call,
  codeFromInbox,
  expectError,
  expectFieldErrors,
  fetchWith,
  inbox,
  newAccount,
  uniqueAddress,
  waitForInbox,
} from '../../support/api';
import { expectExpiry, ISO, SESSION_ID, wrongCode as wrong } from '../../support/otp';
import {
  BLOCKED_IP,
  expectRetryAfter,
  history,
  INSTANT,
  itAllowsAnyOrigin,
  itAppliesIpAllowlist,
  itNeedsSmtp,
  itRejectsOutOfBoundsOptions,
  LEGACY,
  preflight,
  restrictedToken,
  send,
  verify,
} from '../../support/public-otp';
import type { OtpSent } from '../../support/responses';

describe('POST /api/v1/instant-otp/send', () => {
  it('an SMTP server that accepts the connection but never greets: sent false within about 3 s, then the queue retry mails a code that verifies', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('silent');
    const started = Date.now();
    const res = await fetchWith<OtpSent>({ SMTP_PORT: env.SILENT_SMTP_PORT }, 'POST', INSTANT.send, {
      token: publicToken,
      body: { email },
    });
    const elapsed = Date.now() - started;
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ sent: false, sessionId: expect.stringMatching(SESSION_ID) });
    expect(elapsed).toBeGreaterThanOrEqual(2_900);
    expect(elapsed).toBeLessThanOrEqual(4_000);
    // The queue consumer runs with the test's usual SMTP server: the retry gets through.
    const code = await codeFromInbox(email);
    const verified = await verify(publicToken, { sessionId: res.json.data.sessionId, email, code });
    expect(verified.json).toEqual({ success: true, data: { verified: true } });
  });

  it('OTP_SEND_WAIT_MS bounds the wait', async () => {
    const { publicToken } = await newAccount();
    const started = Date.now();
    const res = await fetchWith({ SMTP_PORT: env.SILENT_SMTP_PORT, OTP_SEND_WAIT_MS: '500' }, 'POST', INSTANT.send, {
      token: publicToken,
      body: { email: uniqueAddress('silent') },
    });
    expect(res.json.data).toMatchObject({ sent: false });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

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
        data: {
          sessionId: expect.stringMatching(SESSION_ID),
          expiresAt: expect.stringMatching(ISO),
          email,
          sent: true,
        },
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
    expectError(
      await verify(publicToken, { sessionId: res.json.data.sessionId, email, code: code.slice(0, 6) }),
      400,
      'INVALID_CODE',
    );
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

  itRejectsOutOfBoundsOptions(INSTANT.send);

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
    await expectFieldErrors((body) => send(publicToken, body), cases);
    expect(await inbox(email)).toHaveLength(0);
  });

  it("sends from the account's verified sender when `from` names it", async () => {
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
        await history(INSTANT.history, publicToken, analyticsSecret),
        await history(LEGACY.history, publicToken, analyticsSecret),
      ];
      expect(responses[4]!.status).toBe(200);
      for (const r of responses) expect(JSON.stringify(r.json), `${r.status} response`).not.toContain(code);
    }
    // Sanity: the send response does carry the session id the checks above looked through.
    expect(JSON.stringify(bodies[0])).toMatch(/otp_[0-9a-f]{64}_[a-z2-7]{26}/);
  });

  itNeedsSmtp(INSTANT.send);

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

  describe('public token IP allowlist', () => {
    itAppliesIpAllowlist(INSTANT.send);

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

  describe('rate limits', () => {
    it('per recipient: the 6th send to one address within 10 minutes → 429 OTP_RATE_LIMITED; another address is fine', async () => {
      const { publicToken, serverKey } = await newAccount();
      const other = await newAccount();
      const email = uniqueAddress('per-recipient');
      // Counted per account and address, whichever credential sends.
      for (const token of [publicToken, publicToken, serverKey, publicToken, serverKey]) {
        expect((await send(token, { email })).status).toBe(200);
      }
      for (const [token, path] of [
        [publicToken, INSTANT.send],
        [serverKey, INSTANT.send],
        [publicToken, LEGACY.send],
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

    it('per recipient per day: RATE_OTP_SEND_PER_RECIPIENT_DAY=3 → the 4th code in a day, resends too → 429 for hours', async () => {
      const { publicToken, serverKey } = await newAccount();
      const vars = { RATE_OTP_SEND_PER_RECIPIENT_DAY: '3' };
      const email = uniqueAddress('per-day');
      const first = await fetchWith<OtpSent>(vars, 'POST', INSTANT.send, { token: publicToken, body: { email } });
      expect(first.status).toBe(200);
      const resend = { token: publicToken, body: { sessionId: first.json.data.sessionId, email } };
      expect((await fetchWith(vars, 'POST', '/api/v1/instant-otp/resend', resend)).status).toBe(200);
      expect((await fetchWith(vars, 'POST', INSTANT.send, { token: serverKey, body: { email } })).status).toBe(200);
      for (const [path, options] of [
        [INSTANT.send, { token: serverKey, body: { email } }],
        ['/api/v1/instant-otp/resend', resend],
      ] as const) {
        const limited = await fetchWith(vars, 'POST', path, options);
        expectError(limited, 429, 'OTP_RATE_LIMITED');
        expectRetryAfter(limited, 86_400);
        expect(Number(limited.headers.get('Retry-After'))).toBeGreaterThan(600);
      }
      expect(await waitForInbox(email, 3)).toHaveLength(3);
      const other = uniqueAddress('per-day');
      expect((await fetchWith(vars, 'POST', INSTANT.send, { token: publicToken, body: { email: other } })).status).toBe(
        200,
      );
    });

    it('a loop to one address meets the doubling wait (30 s, whatever the credential or route); a verified code starts it again; another address goes through', async () => {
      const { publicToken, serverKey } = await newAccount();
      // The wait as configured by default (the workers project turns it off for the other tests).
      const vars = { RATE_OTP_BACKOFF_SECONDS: '30' };
      const post = <D = unknown>(token: string, path: string, body: unknown) =>
        fetchWith<D>(vars, 'POST', path, { token, body });
      const email = uniqueAddress('backoff');
      expect((await post(publicToken, INSTANT.send, { email })).status).toBe(200);
      const second = await post<OtpSent>(serverKey, INSTANT.send, { email });
      expect(second.status).toBe(200);
      const { sessionId } = second.json.data;
      const code = await codeFromInbox(email, 6, 2);
      for (const [token, path, body, errorCode] of [
        [publicToken, INSTANT.send, { email }, 'OTP_RATE_LIMITED'],
        [serverKey, INSTANT.send, { email }, 'OTP_RATE_LIMITED'],
        [publicToken, LEGACY.send, { email }, 'OTP_RATE_LIMITED'],
        [publicToken, '/api/v1/instant-otp/resend', { sessionId, email }, 'OTP_RATE_LIMITED'],
        [serverKey, '/api/v1/backend-otp/send', { email }, 'RATE_LIMITED'],
      ] as const) {
        const waiting = await post(token, path, body);
        expectError(waiting, 429, errorCode);
        expectRetryAfter(waiting, 30);
        expect(Number(waiting.headers.get('Retry-After')), path).toBeGreaterThan(20);
      }
      expect((await post(publicToken, INSTANT.send, { email: uniqueAddress('backoff') })).status).toBe(200);
      const verified = await post<{ verified: boolean }>(publicToken, INSTANT.verify, { sessionId, email, code });
      expect(verified.json.data).toEqual({ verified: true });
      expect((await post(publicToken, INSTANT.send, { email })).status).toBe(200);
      expect(await waitForInbox(email, 3)).toHaveLength(3);
    });

    it('quoted and case spellings of one mailbox share its budget; a code verifies under any spelling', async () => {
      const { publicToken } = await newAccount();
      const local = `spelled.${crypto.randomUUID().slice(0, 8)}`;
      const spellings = [
        `${local}@example.com`,
        `"${local}"@example.com`,
        `${local.toUpperCase()}@EXAMPLE.COM`,
        `"${local.replace('s', '\\s')}"@example.com`,
        `"${local.toUpperCase()}"@Example.com`,
      ];
      const sessions = [];
      for (const email of spellings) {
        const res = await send(publicToken, { email });
        expect(res.status, email).toBe(200);
        sessions.push(res.json.data.sessionId);
      }
      expectError(await send(publicToken, { email: `"${local}"@EXAMPLE.com` }), 429, 'OTP_RATE_LIMITED');
      // The sink files mail by envelope address: the plain and upper-case spellings are sessions 0 and 2.
      const code = await codeFromInbox(`${local}@example.com`, 6, 2);
      const res = await verify(publicToken, { sessionId: sessions[2], email: `"${local}"@example.com`, code });
      expect(res.json).toEqual({ success: true, data: { verified: true } });
    });

    it('refused sends (403 SENDER_NOT_VERIFIED) do not count toward the per-recipient limit', async () => {
      const { publicToken } = await newAccount();
      const email = uniqueAddress('per-recipient-refused');
      for (let i = 0; i < 5; i++) {
        expectError(
          await send(publicToken, { email, from: uniqueAddress('not-a-sender') }),
          403,
          'SENDER_NOT_VERIFIED',
        );
      }
      for (let i = 0; i < 5; i++) expect((await send(publicToken, { email })).status).toBe(200);
      expectError(await send(publicToken, { email }), 429, 'OTP_RATE_LIMITED');
    });

    it('per credential: RATE_OTP_SEND_PER_CREDENTIAL=2 → the third send → 429 OTP_RATE_LIMITED', async () => {
      const { publicToken, serverKey } = await newAccount();
      const vars = { RATE_OTP_SEND_PER_CREDENTIAL: '2' };
      for (let i = 0; i < 2; i++) {
        expect(
          (
            await fetchWith(vars, 'POST', INSTANT.send, {
              token: publicToken,
              body: { email: uniqueAddress('per-cred') },
            })
          ).status,
        ).toBe(200);
      }
      const email = uniqueAddress('per-cred');
      for (const path of [INSTANT.send, LEGACY.send]) {
        const limited = await fetchWith(vars, 'POST', path, { token: publicToken, body: { email } });
        expectError(limited, 429, 'OTP_RATE_LIMITED');
        expectRetryAfter(limited, 60);
      }
      expect(await inbox(email)).toHaveLength(0);
      // Another credential of the same account has its own bucket.
      expect((await fetchWith(vars, 'POST', INSTANT.send, { token: serverKey, body: { email } })).status).toBe(200);
    });
  });

  describe('CORS', () => {
    itAllowsAnyOrigin(INSTANT.send);

    it('a POST from an Origin gets Access-Control-Allow-Origin *, also on errors', async () => {
      const { publicToken } = await newAccount();
      const ok = await call('POST', INSTANT.send, {
        token: publicToken,
        body: { email: uniqueAddress('cors') },
        headers: { Origin: 'https://shop.example' },
      });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('Access-Control-Allow-Origin')).toBe('*');
      expect(ok.headers.get('Access-Control-Allow-Credentials')).toBeNull();
      const bad = await call('POST', INSTANT.verify, {
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
});
