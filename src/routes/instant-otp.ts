import type { Context } from 'hono';
import { cors } from 'hono/cors';
import type { Credential } from '../auth/credential';
import { clientIp } from '../auth/credentials';
import { publicOrServer, publicOrServerAnyIp, publicWithSecret } from '../auth/guards';
import { requireChallenge } from '../auth/turnstile';
import type { GuardedEnv } from '../env';
import { ApiError, type ErrorCode } from '../errors';
import { linkTo } from '../openapi/document';
import { otpHistory, resendOtpCode, sendOtp } from '../otp/engine';
import { LANGUAGES } from '../otp/languages';
import { countRefusal } from '../otp/refusals';
import { applySendPolicy } from '../otp/send-policy';
import { RETENTION_NOTE } from '../retention';
import {
  DEFAULT_OTP_DIGITS,
  historyQuery,
  historyResponse,
  instantConfigResponse,
  instantSendBody,
  instantSendResponse,
  legacyHistoryResponse,
  legacySendBody,
  legacySendResponse,
  publicResendBody,
} from '../schemas/otp';
import { HISTORY_ENTRY, OTP_SENT, otpCaller, RESEND, sessionLinks, statusRoutes, verifyRoutes } from './otp-shared';
import { json, ok, route, router } from './route';

// Routes 7-12: browsers call these directly with a public token (or a backend with a server key).
// The legacy alias (/api/v1/otp) shares sessions and history; it differs only in its response shapes.

/** Preflight from any origin; no credentials (decisions.md). */
export const otpCors = cors({
  origin: '*',
  allowHeaders: ['Authorization', 'Content-Type', 'X-Otp-Secret'],
  allowMethods: ['GET', 'POST', 'OPTIONS'],
  // A page's script reads these (a resend countdown from Retry-After; the request id to quote).
  exposeHeaders: ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Request-Id'],
  maxAge: 600,
});

const caller = otpCaller('instant', 'OTP_RATE_LIMITED');
const SEND_ERRORS = ['CHALLENGE_FAILED', 'ADDRESS_NOT_ALLOWED', 'TEMPLATE_NOT_FOUND', 'SMTP_NOT_CONFIGURED'] as const;
/** A public token's resend: the bot check as on its sends. */
const PUBLIC_RESEND = {
  ...RESEND,
  body: publicResendBody,
  errors: ['CHALLENGE_FAILED', ...RESEND.errors] as ErrorCode[],
};
const { sentAt: _sentAt, ...LEGACY_HISTORY_ENTRY } = HISTORY_ENTRY;
const { email: _email, ...LEGACY_SENT } = OTP_SENT;

const send = route({
  method: 'post',
  path: '/api/v1/instant-otp/send',
  tag: 'Instant OTP',
  summary: 'Send an instant OTP',
  guard: publicOrServer,
  limit: { bucket: 'otp-send', code: 'OTP_RATE_LIMITED' },
  body: instantSendBody,
  bodyExample: { email: 'ada@example.com', otpDigits: 6, expiresInSeconds: 600 },
  success: {
    status: 200,
    content: json(instantSendResponse, { success: true, data: OTP_SENT }),
    links: {
      ...sessionLinks('/api/v1/instant-otp'),
      // The site's backend confirms a verification with its server key (a browser's public token cannot).
      status: linkTo('get', '/api/v1/instant-otp/sessions/{sessionId}', {
        parameters: { sessionId: '$response.body#/data/sessionId' },
        security: [{ serverOtpKey: [] }],
      }),
    },
  },
  errors: [...SEND_ERRORS, 'SENDER_NOT_VERIFIED'],
});

const resend = route({
  ...PUBLIC_RESEND,
  path: '/api/v1/instant-otp/resend',
  tag: 'Instant OTP',
  summary: 'Resend an instant OTP (same session, a fresh code)',
  guard: publicOrServer,
  limit: { bucket: 'otp-send', code: 'OTP_RATE_LIMITED' },
  success: { status: 200, content: json(instantSendResponse, { success: true, data: OTP_SENT }) },
});

const legacyResend = route({
  ...PUBLIC_RESEND,
  path: '/api/v1/otp/resend',
  tag: 'Legacy OTP',
  summary: 'Legacy alias of instant OTP resend',
  guard: publicOrServer,
  limit: { bucket: 'otp-send', code: 'OTP_RATE_LIMITED' },
  success: { status: 200, content: json(legacySendResponse, { success: true, data: LEGACY_SENT }) },
});

const history = route({
  method: 'get',
  path: '/api/v1/instant-otp/verifications',
  tag: 'Instant OTP',
  summary: 'Instant OTP verification history',
  description: RETENTION_NOTE.entries,
  guard: publicWithSecret,
  limit: { bucket: 'read' },
  query: historyQuery,
  success: { status: 200, content: json(historyResponse, { success: true, data: { verifications: [HISTORY_ENTRY] } }) },
});

const instantConfig = route({
  method: 'get',
  path: '/api/v1/instant-otp/config',
  tag: 'Instant OTP',
  summary: 'What a browser needs before its first send (bot check, languages, code length)',
  guard: publicOrServer,
  limit: { bucket: 'read' },
  success: {
    status: 200,
    content: json(instantConfigResponse, {
      success: true,
      data: { turnstile: { siteKey: '0x4AAAAAAAB3c9kqz2mX7fNw' }, languages: [...LANGUAGES], codeLength: 6 },
    }),
  },
});

const legacySend = route({
  method: 'post',
  path: '/api/v1/otp/send',
  tag: 'Legacy OTP',
  summary: 'Legacy alias of instant OTP send',
  guard: publicOrServer,
  limit: { bucket: 'otp-send', code: 'OTP_RATE_LIMITED' },
  body: legacySendBody,
  bodyExample: { email: 'ada@example.com' },
  success: {
    status: 200,
    content: json(legacySendResponse, { success: true, data: LEGACY_SENT }),
    links: sessionLinks('/api/v1/otp'),
  },
  errors: [...SEND_ERRORS],
});

const legacyHistory = route({
  method: 'get',
  path: '/api/v1/otp/verifications',
  tag: 'Legacy OTP',
  summary: 'Legacy alias of the instant OTP history',
  description: RETENTION_NOTE.entries,
  guard: publicWithSecret,
  limit: { bucket: 'read' },
  query: historyQuery,
  success: {
    status: 200,
    content: json(legacyHistoryResponse, { success: true, data: { verifications: [LEGACY_HISTORY_ENTRY] } }),
  },
});

/**
 * A send's body without the bot check's answer, once the check has passed (a public token that requires Turnstile:
 * 403 CHALLENGE_FAILED before anything is mailed).
 */
async function challenged<T extends { turnstileToken?: string }>(
  c: Context<GuardedEnv<Credential>>,
  body: T,
): Promise<Omit<T, 'turnstileToken'>> {
  const { turnstileToken, ...request } = body;
  const { credential } = c.var;
  try {
    await requireChallenge(c.env, credential, turnstileToken, clientIp(c));
  } catch (error) {
    if (error instanceof ApiError && error.code === 'CHALLENGE_FAILED') {
      countRefusal(c.env, credential.accountId, 'instant', 'challenge_failed');
    }
    throw error;
  }
  return request;
}

/**
 * A new session's body once the bot check has passed and the token's send policy allows its address (resends
 * are of an address already allowed: the recipient's limits count them).
 */
async function admitted<T extends { turnstileToken?: string; email: string }>(
  c: Context<GuardedEnv<Credential>>,
  body: T,
): Promise<Omit<T, 'turnstileToken'>> {
  const request = await challenged(c, body);
  await applySendPolicy(c.env, c.var.credential, request.email, 'OTP_RATE_LIMITED');
  return request;
}

export const instantOtpRoutes = router()
  // 7. Send
  .openapi(send, async (c) => {
    const request = await admitted(c, c.req.valid('json'));
    return ok(c, await sendOtp(c.env, caller(c.var.credential.accountId), request));
  })
  .openapi(resend, async (c) => {
    const request = await challenged(c, c.req.valid('json'));
    return ok(c, await resendOtpCode(c.env, caller(c.var.credential.accountId), request));
  })
  .openapi(legacyResend, async (c) => {
    const request = await challenged(c, c.req.valid('json'));
    const { sessionId, expiresAt, sent } = await resendOtpCode(c.env, caller(c.var.credential.accountId), request);
    return ok(c, { sessionId, expiresAt, sent });
  })
  // 8. Verify
  .route(
    '/',
    verifyRoutes({
      path: '/api/v1/instant-otp/verify',
      tag: 'Instant OTP',
      summary: 'Verify an instant OTP',
      guard: publicOrServerAnyIp,
      channel: 'instant',
    }),
  )
  .route(
    '/',
    statusRoutes({
      path: '/api/v1/instant-otp/sessions/{sessionId}',
      tag: 'Instant OTP',
      summary: "A session's outcome, for the site's backend (server key): what the browser reports, confirmed",
      channel: 'instant',
    }),
  )
  .openapi(instantConfig, (c) => {
    const { credential } = c.var;
    const turnstile = credential.kind === 'public_token' ? credential.turnstile : null;
    return ok(c, {
      turnstile: turnstile ? { siteKey: turnstile.siteKey } : null,
      languages: [...LANGUAGES],
      codeLength: DEFAULT_OTP_DIGITS,
    });
  })
  // 9. History
  .openapi(history, async (c) => {
    const verifications = await otpHistory(c.env, c.var.credential.accountId, 'instant', c.req.valid('query').limit);
    return ok(c, { verifications });
  })
  // 10. Send (no `email` in the response)
  .openapi(legacySend, async (c) => {
    const request = await admitted(c, c.req.valid('json'));
    const { sessionId, expiresAt, sent } = await sendOtp(c.env, caller(c.var.credential.accountId), request);
    return ok(c, { sessionId, expiresAt, sent });
  })
  // 11. Verify
  .route(
    '/',
    verifyRoutes({
      path: '/api/v1/otp/verify',
      tag: 'Legacy OTP',
      summary: 'Legacy alias of instant OTP verify',
      guard: publicOrServerAnyIp,
      channel: 'instant',
    }),
  )
  // 12. History (no `sentAt`)
  .openapi(legacyHistory, async (c) => {
    const verifications = await otpHistory(c.env, c.var.credential.accountId, 'instant', c.req.valid('query').limit);
    const entries = verifications.map(({ id, email, verifiedAt }) => ({ id, email, verifiedAt }));
    return ok(c, { verifications: entries });
  });
