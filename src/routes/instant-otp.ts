import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { publicOrServer, publicWithSecret } from '../auth/guards';
import type { AppEnv } from '../env';
import { rateLimit } from '../limits/rate-limit';
import { otpHistory, sendOtp, verifyOtp } from '../otp/engine';
import { historyQuery, instantSendBody, legacySendBody, verifyBody } from '../schemas/otp';
import { validate } from '../validation';

// Routes 7-12: browsers call these directly with a public token (or a backend with a server key).
// The legacy alias (/api/v1/otp) shares sessions and history; it differs only in its response shapes.

/** Preflight from any origin; no credentials (decisions.md). */
export const otpCors = cors({
  origin: '*',
  allowHeaders: ['Authorization', 'Content-Type', 'X-Otp-Secret'],
  allowMethods: ['GET', 'POST', 'OPTIONS'],
  maxAge: 600,
});

const caller = (accountId: string) => ({ accountId, channel: 'instant' as const, rateLimitCode: 'OTP_RATE_LIMITED' as const });

export const instantOtpRoutes = new Hono<AppEnv>()
  // 7. Send
  .post('/send', publicOrServer({ checkAllowlist: true }), rateLimit('otp-send', 'OTP_RATE_LIMITED'), validate('json', instantSendBody), async (c) => {
    const result = await sendOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return c.json({ success: true, data: result });
  })
  // 8. Verify
  .post('/verify', publicOrServer({ checkAllowlist: false }), validate('json', verifyBody), async (c) => {
    await verifyOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return c.json({ success: true, data: { verified: true } });
  })
  // 9. History
  .get('/verifications', publicWithSecret(), rateLimit('read'), validate('query', historyQuery), async (c) => {
    const verifications = await otpHistory(c.env, c.var.credential.accountId, 'instant', c.req.valid('query').limit);
    return c.json({ success: true, data: { verifications } });
  });

export const legacyOtpRoutes = new Hono<AppEnv>()
  // 10. Send (no `email` in the response)
  .post('/send', publicOrServer({ checkAllowlist: true }), rateLimit('otp-send', 'OTP_RATE_LIMITED'), validate('json', legacySendBody), async (c) => {
    const { sessionId, expiresAt, sent } = await sendOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return c.json({ success: true, data: { sessionId, expiresAt, sent } });
  })
  // 11. Verify
  .post('/verify', publicOrServer({ checkAllowlist: false }), validate('json', verifyBody), async (c) => {
    await verifyOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return c.json({ success: true, data: { verified: true } });
  })
  // 12. History (no `sentAt`)
  .get('/verifications', publicWithSecret(), rateLimit('read'), validate('query', historyQuery), async (c) => {
    const verifications = await otpHistory(c.env, c.var.credential.accountId, 'instant', c.req.valid('query').limit);
    return c.json({ success: true, data: { verifications: verifications.map(({ id, email, verifiedAt }) => ({ id, email, verifiedAt })) } });
  });
