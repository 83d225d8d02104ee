// GET /api/v1/instant-otp/sessions/{sessionId}: how a site's backend confirms, with its server key, the verification
// a browser reports (the <postcode-otp> element's `postcode-otp:verified` event); the browser is never trusted alone.
import { describe, expect, it } from 'vitest';
import { call, expectError, newAccount, uniqueAddress } from '../../support/api';
import { ISO, unknownSessionId, wrongCode } from '../../support/otp';
import { INSTANT, LEGACY, sendAndRead, verify } from '../../support/public-otp';
import type { OtpSent } from '../../support/responses';

type SessionStatus = { sessionId: string; email: string; status: string; expiresAt: string; verifiedAt?: string };

const status = (token: string, sessionId: string) =>
  call<SessionStatus>('GET', `/api/v1/instant-otp/sessions/${sessionId}`, { token });

describe('GET /api/v1/instant-otp/sessions/{sessionId}', () => {
  it('a session the browser started with the public token: pending, then verified with verifiedAt', async () => {
    const { publicToken, serverKey } = await newAccount();
    const email = uniqueAddress('instant-status');
    const { sessionId, code, expiresAt } = await sendAndRead(publicToken, email);
    expect((await status(serverKey, sessionId)).json).toEqual({
      success: true,
      data: { sessionId, email, status: 'pending', expiresAt },
    });
    expect((await verify(publicToken, { sessionId, email, code })).status).toBe(200);
    const done = await status(serverKey, sessionId);
    expect(done.json.data).toEqual({
      sessionId,
      email,
      status: 'verified',
      expiresAt,
      verifiedAt: expect.stringMatching(ISO),
    });
  });

  it('a legacy-route session is an instant one; locked after the attempts run out', async () => {
    const { publicToken, serverKey } = await newAccount();
    const email = uniqueAddress('instant-status');
    const { sessionId, code } = await sendAndRead(publicToken, email, {}, LEGACY.send);
    for (let i = 0; i < 5; i++) await verify(publicToken, { sessionId, email, code: wrongCode(code) }, INSTANT.verify);
    const locked = await status(serverKey, sessionId);
    expect(locked.json.data).toMatchObject({ sessionId, email, status: 'locked' });
    expect(locked.json.data.verifiedAt).toBeUndefined();
  });

  it("the public token cannot ask (401/403); 404 for another account's, another flavour's or an unknown session", async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const { sessionId } = await sendAndRead(other.publicToken, uniqueAddress('instant-status'));
    expect([401, 403]).toContain((await status(other.publicToken, sessionId)).status);
    expectError(await status(mine.serverKey, sessionId), 404, 'SESSION_NOT_FOUND');
    const backend = await call<OtpSent>('POST', '/api/v1/backend-otp/send', {
      token: mine.serverKey,
      body: { email: uniqueAddress('instant-status') },
    });
    expectError(await status(mine.serverKey, backend.json.data.sessionId), 404, 'SESSION_NOT_FOUND');
    expectError(await status(mine.serverKey, unknownSessionId()), 404, 'SESSION_NOT_FOUND');
  });
});
