// Instant OTP verify and history (routes 8, 9; interface-v1.md endpoints 8, 9): checking a code, attempts,
// locks, concurrency and expiry, and the list of verified sessions; decisions.md "Authentication", "One-time codes",
// "Rate limits". The send route (7): instant-otp-send.test.ts; the legacy aliases (10-12): legacy-otp.test.ts.
import { describe, expect, it } from 'vitest';
import { accountDb } from '../../support/account-db';
import { call, codeFromInbox, expectError, newAccount, uniqueAddress } from '../../support/api';
import { clearExpiredSession, expireSession, ISO, unknownSessionId, wrongCode as wrong } from '../../support/otp';
import {
  ALLOWED_IP,
  BLOCKED_IP,
  describeHistoryLimits,
  expectRetryAfter,
  history,
  INSTANT,
  itAllowsAnyOrigin,
  itRequiresTokenAndSecret,
  LEGACY,
  restrictedToken,
  send,
  sendAndRead,
  sleep,
  storedRows,
  verify,
} from '../../support/public-otp';
import type { LegacyVerificationList, OtpSent } from '../../support/responses';

describe('POST /api/v1/instant-otp/verify', () => {
  it('right code → verified:true; the session is consumed (404 afterwards)', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('verify');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    const ok = await verify(publicToken, { sessionId, email, code });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ success: true, data: { verified: true } });
    expectError(await verify(publicToken, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    expectError(await verify(publicToken, { sessionId, email, code }, LEGACY.verify), 404, 'SESSION_NOT_FOUND');
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
    for (let i = 0; i < 3; i++)
      expectError(await verify(publicToken, { sessionId, email, code: wrong(code) }), 400, 'INVALID_CODE');
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
    expect((await verify(publicToken, { sessionId, email, code })).json).toEqual({
      success: true,
      data: { verified: true },
    });
  });

  it('after 5 wrong codes the right code → 429 RATE_LIMITED with Retry-After (locked)', async () => {
    const { publicToken, serverKey } = await newAccount();
    const email = uniqueAddress('lock');
    const { sessionId, code } = await sendAndRead(publicToken, email);
    for (let i = 0; i < 5; i++)
      expectError(await verify(publicToken, { sessionId, email, code: wrong(code) }), 400, 'INVALID_CODE');
    for (const [token, path] of [
      [publicToken, INSTANT.verify],
      [serverKey, LEGACY.verify],
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
    for (const id of [
      unknownSessionId(),
      'otp_aaaaaaaaaaaaaaaaaaaaaaaaaa',
      'otp_abc',
      'abc',
      sessionId.toUpperCase(),
      `${sessionId}x`,
      'em_aaaaaaaaaaaaaaaaaaaa',
    ]) {
      expectError(await verify(mine.publicToken, { sessionId: id, email, code }), 404, 'SESSION_NOT_FOUND');
    }
    expectError(await verify(mine.publicToken, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    expectError(await verify(mine.serverKey, { sessionId, email, code }, LEGACY.verify), 404, 'SESSION_NOT_FOUND');
    // The other account's failed lookups did not use up the session.
    expect(await storedRows(sessionId)).toEqual([{ attempts: 0 }]);
    expect((await verify(other.publicToken, { sessionId, email, code })).json).toEqual({
      success: true,
      data: { verified: true },
    });
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
    const res = await call<OtpSent>('POST', '/api/v1/backend-otp/send', { token: serverKey, body: { email } });
    expect(res.status).toBe(200);
    const code = await codeFromInbox(email);
    const sessionId = res.json.data.sessionId;
    expectError(await verify(serverKey, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    expectError(await verify(publicToken, { sessionId, email, code }, LEGACY.verify), 404, 'SESSION_NOT_FOUND');
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

  it('verify is not subject to the allowlist', async () => {
    const { accountId } = await newAccount();
    const { token } = await restrictedToken(accountId);
    const email = uniqueAddress('ip-verify');
    const res = await send(token, { email }, { 'CF-Connecting-IP': ALLOWED_IP });
    expect(res.status).toBe(200);
    const code = await codeFromInbox(email);
    const blockedVerify = await call('POST', INSTANT.verify, {
      token,
      body: { sessionId: res.json.data.sessionId, email, code: wrong(code) },
      headers: { 'CF-Connecting-IP': BLOCKED_IP },
    });
    expectError(blockedVerify, 400, 'INVALID_CODE');
    const ok = await call('POST', LEGACY.verify, {
      token,
      body: { sessionId: res.json.data.sessionId, email, code },
      headers: { 'CF-Connecting-IP': BLOCKED_IP },
    });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ success: true, data: { verified: true } });
  });

  describe('concurrent verifies', () => {
    it('20 parallel verifies with the right code → exactly one verified:true, the rest 404 or 400', async () => {
      const { publicToken, analyticsSecret } = await newAccount();
      const email = uniqueAddress('race');
      const { sessionId, code } = await sendAndRead(publicToken, email);
      const results = await Promise.all(
        Array.from({ length: 20 }, () => verify(publicToken, { sessionId, email, code })),
      );
      const ok = results.filter((r) => r.status === 200);
      expect(ok).toHaveLength(1);
      expect(ok[0]!.json).toEqual({ success: true, data: { verified: true } });
      for (const r of results.filter((r) => r.status !== 200)) {
        expect([404, 400], JSON.stringify(r.json)).toContain(r.status);
        expect(['SESSION_NOT_FOUND', 'INVALID_CODE']).toContain(r.json.error.code);
      }
      const list = await history(INSTANT.history, publicToken, analyticsSecret);
      expect(list.json.data.verifications).toHaveLength(1);
    });

    it('50 parallel wrong codes → 5 INVALID_CODE, the rest 429; then the right code → 429', async () => {
      const { publicToken } = await newAccount();
      const email = uniqueAddress('race-wrong');
      const { sessionId, code } = await sendAndRead(publicToken, email);
      const results = await Promise.all(
        Array.from({ length: 50 }, () => verify(publicToken, { sessionId, email, code: wrong(code) })),
      );
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
      expectError(await verify(publicToken, { sessionId, email, code }, LEGACY.verify), 404, 'SESSION_NOT_FOUND');
    });

    it("the alarm deletes a session once its keep time after expiry is over (the account's object told it expired); verify → 404", async () => {
      const { accountId, publicToken } = await newAccount();
      const email = uniqueAddress('alarm');
      const { sessionId, code } = await sendAndRead(publicToken, email);
      expect(await storedRows(sessionId)).toHaveLength(1);
      await clearExpiredSession(sessionId);
      expect(await storedRows(sessionId)).toHaveLength(0);
      const ended = await accountDb(accountId)
        .prepare('SELECT outcome FROM otp_outcomes WHERE session_id = ?')
        .bind(sessionId)
        .first();
      expect(ended).toEqual({ outcome: 'expired' });
      expectError(await verify(publicToken, { sessionId, email, code }), 404, 'SESSION_NOT_FOUND');
    });
  });

  describe('rate limits', () => {
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
        for (let i = 0; i < 5; i++)
          expectError(
            await verify(publicToken, { sessionId: s.sessionId, email, code: wrong(s.code) }),
            400,
            'INVALID_CODE',
          );
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
  });

  itAllowsAnyOrigin(INSTANT.verify);
});

describe('GET /api/v1/instant-otp/verifications', () => {
  it('lists only verified sessions of the account, newest first (legacy without sentAt)', async () => {
    const { publicToken, serverKey, analyticsSecret } = await newAccount();
    const other = await newAccount();
    const a = uniqueAddress('hist-a');
    const b = uniqueAddress('hist-b');
    const c = uniqueAddress('hist-c');
    const first = await sendAndRead(publicToken, a);
    const second = await sendAndRead(serverKey, b, {}, LEGACY.send);
    await sendAndRead(publicToken, c); // never verified
    const d = uniqueAddress('hist-d');
    const wrongOnly = await sendAndRead(publicToken, d);
    expectError(
      await verify(publicToken, { sessionId: wrongOnly.sessionId, email: d, code: wrong(wrongOnly.code) }),
      400,
      'INVALID_CODE',
    );

    expect((await verify(publicToken, { sessionId: first.sessionId, email: a, code: first.code })).status).toBe(200);
    await sleep(20);
    expect(
      (await verify(serverKey, { sessionId: second.sessionId, email: b, code: second.code }, LEGACY.verify)).status,
    ).toBe(200);
    // Verified on another account: not listed here.
    const e = uniqueAddress('hist-e');
    const foreign = await sendAndRead(other.publicToken, e);
    expect(
      (await verify(other.publicToken, { sessionId: foreign.sessionId, email: e, code: foreign.code })).status,
    ).toBe(200);

    const list = await history(INSTANT.history, publicToken, analyticsSecret);
    expect(list.status).toBe(200);
    expect(list.json.success).toBe(true);
    const entries = list.json.data.verifications;
    expect(entries.map((v) => v.email)).toEqual([b, a]);
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(['email', 'id', 'sentAt', 'verifiedAt']);
      expect(entry.id).toEqual(expect.any(String));
      expect(entry.sentAt).toMatch(ISO);
      expect(entry.verifiedAt).toMatch(ISO);
      expect(Date.parse(entry.sentAt)).toBeLessThanOrEqual(Date.parse(entry.verifiedAt));
    }
    expect(Date.parse(entries[0]!.verifiedAt)).toBeGreaterThan(Date.parse(entries[1]!.verifiedAt));

    const legacy = await history<LegacyVerificationList>(LEGACY.history, publicToken, analyticsSecret);
    expect(legacy.status).toBe(200);
    expect(legacy.json.data.verifications).toEqual(
      entries.map(({ id, email, verifiedAt }) => ({ id, email, verifiedAt })),
    );
    for (const entry of legacy.json.data.verifications)
      expect(Object.keys(entry).sort()).toEqual(['email', 'id', 'verifiedAt']);
  });

  describeHistoryLimits(INSTANT.history);

  itRequiresTokenAndSecret(INSTANT.history);

  itAllowsAnyOrigin(INSTANT.history);
});
