// The legacy aliases of instant OTP (routes 10-12; interface-v1.md endpoints 10-12): POST /api/v1/otp/send,
// POST /api/v1/otp/verify and GET /api/v1/otp/verifications. They share the engine, the sessions, the limits
// and the history with the instant routes: the tests in instant-otp-send.test.ts and instant-otp-verify.test.ts
// also send, verify and list through them (a session sent on one family verifies on the other, both count
// toward the same send limits, a consumed or expired session is 404 and a locked one 429 on both). The tests
// both families pass alike are in test/support/public-otp.ts and run here for the legacy paths.
import { describe, expect, it } from 'vitest';
import { codeFromInbox, newAccount, uniqueAddress } from '../../support/api';
import { expectExpiry, ISO, SESSION_ID } from '../../support/otp';
import {
  describeHistoryLimits,
  INSTANT,
  itAllowsAnyOrigin,
  itAppliesIpAllowlist,
  itNeedsSmtp,
  itRejectsOutOfBoundsOptions,
  itRequiresTokenAndSecret,
  LEGACY,
  send,
  sendAndRead,
  verify,
} from '../../support/public-otp';
import type { LegacyOtpSent } from '../../support/responses';

describe('POST /api/v1/otp/send (legacy alias)', () => {
  it('answers exactly sessionId, expiresAt and sent, and the mailed code verifies on both verify routes', async () => {
    const { publicToken, serverKey } = await newAccount();
    const email = uniqueAddress('legacy');
    const before = Date.now();
    const res = await send<LegacyOtpSent>(publicToken, { email }, undefined, LEGACY.send);
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      data: { sessionId: expect.stringMatching(SESSION_ID), expiresAt: expect.stringMatching(ISO), sent: true },
    });
    expect(Object.keys(res.json.data).sort()).toEqual(['expiresAt', 'sent', 'sessionId']);
    expectExpiry(res.json.data.expiresAt, { before, after });
    const code = await codeFromInbox(email, 6);
    const ok = await verify(serverKey, { sessionId: res.json.data.sessionId, email, code }, INSTANT.verify);
    expect(ok.json).toEqual({ success: true, data: { verified: true } });

    const email2 = uniqueAddress('legacy');
    const second = await sendAndRead(serverKey, email2, { otpDigits: 8, expiresInSeconds: 120 }, INSTANT.send);
    expect(second.code).toHaveLength(8);
    const ok2 = await verify(
      publicToken,
      { sessionId: second.sessionId, email: email2, code: second.code },
      LEGACY.verify,
    );
    expect(ok2.json).toEqual({ success: true, data: { verified: true } });
  });

  itRejectsOutOfBoundsOptions(LEGACY.send);

  itNeedsSmtp(LEGACY.send);

  describe('public token IP allowlist', () => {
    itAppliesIpAllowlist(LEGACY.send);
  });

  itAllowsAnyOrigin(LEGACY.send);
});

describe('POST /api/v1/otp/verify (legacy alias)', () => {
  itAllowsAnyOrigin(LEGACY.verify);
});

describe('GET /api/v1/otp/verifications (legacy alias)', () => {
  describeHistoryLimits(LEGACY.history);

  itRequiresTokenAndSecret(LEGACY.history);

  itAllowsAnyOrigin(LEGACY.history);
});
