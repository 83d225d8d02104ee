// POST /api/v1/{instant-otp|otp|backend-otp|email-verification}/resend: a fresh code for the same session,
// every code mailed for it valid until expiry, one attempt budget.
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { call, codeFromInbox, expectError, newAccount, postWith, uniqueAddress, waitForInbox } from '../../support/api';
import { expireSession, sendAndRead, sessionStub, wrongCode } from '../../support/otp';
import type { LegacyOtpSent, OtpSent } from '../../support/responses';

const FLAVOURS = [
  // `other`: a flavour the same credential may call, whose sessions are not this one's (instant and legacy share).
  {
    base: '/api/v1/backend-otp',
    token: 'serverKey' as const,
    limited: 'RATE_LIMITED',
    other: '/api/v1/email-verification',
  },
  {
    base: '/api/v1/email-verification',
    token: 'serverKey' as const,
    limited: 'RATE_LIMITED',
    other: '/api/v1/backend-otp',
  },
  { base: '/api/v1/instant-otp', token: 'publicToken' as const, limited: 'OTP_RATE_LIMITED', other: null },
  { base: '/api/v1/otp', token: 'publicToken' as const, limited: 'OTP_RATE_LIMITED', other: null },
];

const resend = (base: string, token: string, body: unknown) =>
  call<OtpSent & { hostedVerifyUrl?: string }>('POST', `${base}/resend`, { token, body });
const verify = (base: string, token: string, body: unknown) => call('POST', `${base}/verify`, { token, body });

describe.each(FLAVOURS)('POST $base/resend', ({ base, token: kind, limited, other }) => {
  it('the code of the first mail still verifies after two resends, each a fresh code', async () => {
    const account = await newAccount();
    const token = account[kind];
    const email = uniqueAddress('resend');
    const first = await sendAndRead<LegacyOtpSent>(`${base}/send`, token, email);
    const again = await resend(base, token, { sessionId: first.sessionId, email });
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect(again.json.data).toMatchObject({ sessionId: first.sessionId, expiresAt: first.expiresAt, sent: true });
    const sendShape = Object.keys(first.res.json.data).sort();
    expect(Object.keys(again.json.data).sort()).toEqual(sendShape);
    const second = await codeFromInbox(email, 6, 2);
    expect((await resend(base, token, { sessionId: first.sessionId, email })).status).toBe(200);
    const third = await codeFromInbox(email, 6, 3);
    expect(new Set([first.code, second, third]).size).toBe(3);
    const mails = await waitForInbox(email, 3);
    expect(new Set(mails.map((m) => m.messageId)).size).toBe(3);
    // Only HMACs are stored: three of them, none of them a code.
    const hashes = await runInDurableObject(sessionStub(first.sessionId), (_instance, state) =>
      String(
        state.storage.sql.exec('SELECT code_hash FROM otp_sessions WHERE id = ?', first.sessionId).one().code_hash,
      ),
    );
    expect(hashes.split(',')).toHaveLength(3);
    for (const hash of hashes.split(',')) expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const res = await verify(base, token, { sessionId: first.sessionId, email, code: first.code });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    // Used up: no code of it works any more, and it cannot be resent.
    expectError(
      await verify(base, token, { sessionId: first.sessionId, email, code: third }),
      404,
      'SESSION_NOT_FOUND',
    );
    expectError(await resend(base, token, { sessionId: first.sessionId, email }), 404, 'SESSION_NOT_FOUND');
  });

  it('5 wrong codes across resends lock the session; a locked session is not resent', async () => {
    const account = await newAccount();
    const token = account[kind];
    const email = uniqueAddress('lock');
    const { sessionId, code } = await sendAndRead<LegacyOtpSent>(`${base}/send`, token, email);
    const wrong = wrongCode(code);
    for (const round of [2, 2, 1]) {
      for (let i = 0; i < round; i++) {
        expectError(await verify(base, token, { sessionId, email, code: wrong }), 400, 'INVALID_CODE');
      }
      if (round === 2) expect((await resend(base, token, { sessionId, email })).status).toBe(200);
    }
    const last = await codeFromInbox(email, 6, 3);
    expectError(await verify(base, token, { sessionId, email, code: last }), 429, 'RATE_LIMITED');
    expectError(await resend(base, token, { sessionId, email }), 404, 'SESSION_NOT_FOUND');
  });

  it('404 for an unknown or expired session, another address, another account, or another flavour', async () => {
    const account = await newAccount();
    const stranger = await newAccount();
    const token = account[kind];
    const email = uniqueAddress('nf');
    const { sessionId } = await sendAndRead<LegacyOtpSent>(`${base}/send`, token, email);
    expectError(await resend(base, stranger[kind], { sessionId, email }), 404, 'SESSION_NOT_FOUND');
    expectError(await resend(base, token, { sessionId, email: uniqueAddress('other') }), 404, 'SESSION_NOT_FOUND');
    if (other) expectError(await resend(other, token, { sessionId, email }), 404, 'SESSION_NOT_FOUND');
    expectError(
      await resend(base, token, { sessionId: `${sessionId.slice(0, -4)}aaaa`, email }),
      404,
      'SESSION_NOT_FOUND',
    );
    await expireSession(sessionId);
    expectError(await resend(base, token, { sessionId, email }), 404, 'SESSION_NOT_FOUND');
  });

  it('the recipient send limit counts resends', async () => {
    const account = await newAccount();
    const token = account[kind];
    const email = uniqueAddress('limit');
    const vars = { RATE_OTP_SEND_PER_RECIPIENT: '2' };
    const sent = await postWith<OtpSent>(vars, `${base}/send`, token, { email });
    expect(sent.status).toBe(200);
    const body = { sessionId: sent.json.data.sessionId, email };
    expect((await postWith(vars, `${base}/resend`, token, body)).status).toBe(200);
    const refused = await postWith(vars, `${base}/resend`, token, body);
    expectError(refused, 429, limited);
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
  });

  it('refuses a malformed body and the wrong credential', async () => {
    const account = await newAccount();
    const token = account[kind];
    for (const body of [
      {},
      { sessionId: 'x' },
      { sessionId: 'x', email: 'not an address' },
      { sessionId: 'x', email: 'a@example.com', code: '1' },
    ]) {
      expectError(await resend(base, token, body), 400, 'INVALID_INPUT');
    }
    expectError(await resend(base, account.mailKey, { sessionId: 'x', email: 'a@example.com' }), 403, 'SCOPE_REQUIRED');
  });
});
