import { Hono } from 'hono';
import { requireScope } from '../auth/guards';
import type { AppEnv } from '../env';
import { ApiError } from '../errors';
import { nowIso } from '../ids';
import { rateLimit } from '../limits/rate-limit';
import { otpStatus, sendOtp, verifyOtp } from '../otp/engine';
import { serverSendBody, sessionIdParam, verifyBody } from '../schemas/otp';
import { validate } from '../validation';

const serverOtp = requireScope('server_otp');
const caller = (accountId: string) => ({
  accountId,
  channel: 'email_verification' as const,
  rateLimitCode: 'RATE_LIMITED' as const,
});

/** The hosted page's address: from PUBLIC_BASE_URL, never from the Host header. */
export function hostedVerifyUrl(publicBaseUrl: string, sessionId: string): string {
  const url = new URL('/verify', publicBaseUrl);
  url.searchParams.set('sessionId', sessionId);
  return url.toString();
}

/** Routes 16-17 and the status route: email verification with a hosted verify page. */
export const emailVerificationRoutes = new Hono<AppEnv>()
  .post('/send', serverOtp, rateLimit('otp-send'), validate('json', serverSendBody), async (c) => {
    const result = await sendOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return c.json({ success: true, data: { ...result, hostedVerifyUrl: hostedVerifyUrl(c.env.PUBLIC_BASE_URL, result.sessionId) } });
  })
  .post('/verify', serverOtp, validate('json', verifyBody), async (c) => {
    await verifyOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return c.json({ success: true, data: { verified: true } });
  })
  // The outcome of a hosted verification, for the backend that started it.
  .get('/:sessionId', serverOtp, rateLimit('read'), validate('param', sessionIdParam), async (c) => {
    const { sessionId } = c.req.valid('param');
    const status = await otpStatus(c.env, c.var.credential.accountId, 'email_verification', sessionId);
    if (!status) throw new ApiError('SESSION_NOT_FOUND', 'sessionId: no such session');
    return c.json({
      success: true,
      data: {
        sessionId,
        email: status.email,
        status: status.status,
        expiresAt: nowIso(new Date(status.expiresAt)),
        ...(status.verifiedAt ? { verifiedAt: nowIso(new Date(status.verifiedAt)) } : {}),
      },
    });
  });
