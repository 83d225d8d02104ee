import { Hono } from 'hono';
import { requireScope } from '../auth/guards';
import type { AppEnv } from '../env';
import { rateLimit } from '../limits/rate-limit';
import { otpHistory, sendOtp, verifyOtp } from '../otp/engine';
import { historyQuery, serverSendBody, verifyBody } from '../schemas/otp';
import { validate } from '../validation';

const serverOtp = requireScope('server_otp');
const caller = (accountId: string) => ({ accountId, channel: 'backend' as const, rateLimitCode: 'RATE_LIMITED' as const });

/** Routes 13-15: server to server, server_otp keys only; no IP allowlist. */
export const backendOtpRoutes = new Hono<AppEnv>()
  .post('/send', serverOtp, rateLimit('otp-send'), validate('json', serverSendBody), async (c) => {
    const result = await sendOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return c.json({ success: true, data: result });
  })
  .post('/verify', serverOtp, validate('json', verifyBody), async (c) => {
    await verifyOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return c.json({ success: true, data: { verified: true } });
  })
  .get('/verifications', serverOtp, rateLimit('read'), validate('query', historyQuery), async (c) => {
    const verifications = await otpHistory(c.env, c.var.credential.accountId, 'backend', c.req.valid('query').limit);
    return c.json({ success: true, data: { verifications } });
  });
