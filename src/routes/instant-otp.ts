import { cors } from 'hono/cors';
import { publicOrServer, publicOrServerAnyIp, publicWithSecret } from '../auth/guards';
import { otpHistory, resendOtpCode, sendOtp } from '../otp/engine';
import { RETENTION_NOTE } from '../retention';
import {
  historyQuery,
  historyResponse,
  instantSendBody,
  instantSendResponse,
  legacyHistoryResponse,
  legacySendBody,
  legacySendResponse,
} from '../schemas/otp';
import { HISTORY_ENTRY, OTP_SENT, otpCaller, RESEND, sessionLinks, verifyRoutes } from './otp-shared';
import { json, ok, route, router } from './route';

// Routes 7-12: browsers call these directly with a public token (or a backend with a server key).
// The legacy alias (/api/v1/otp) shares sessions and history; it differs only in its response shapes.

/** Preflight from any origin; no credentials (decisions.md). */
export const otpCors = cors({
  origin: '*',
  allowHeaders: ['Authorization', 'Content-Type', 'X-Otp-Secret'],
  allowMethods: ['GET', 'POST', 'OPTIONS'],
  maxAge: 600,
});

const caller = otpCaller('instant', 'OTP_RATE_LIMITED');
const SEND_ERRORS = ['TEMPLATE_NOT_FOUND', 'SMTP_NOT_CONFIGURED'] as const;
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
    links: sessionLinks('/api/v1/instant-otp'),
  },
  errors: [...SEND_ERRORS, 'SENDER_NOT_VERIFIED'],
});

const resend = route({
  ...RESEND,
  path: '/api/v1/instant-otp/resend',
  tag: 'Instant OTP',
  summary: 'Resend an instant OTP (same session, a fresh code)',
  guard: publicOrServer,
  limit: { bucket: 'otp-send', code: 'OTP_RATE_LIMITED' },
  success: { status: 200, content: json(instantSendResponse, { success: true, data: OTP_SENT }) },
});

const legacyResend = route({
  ...RESEND,
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

export const instantOtpRoutes = router()
  // 7. Send
  .openapi(send, async (c) => {
    const result = await sendOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return ok(c, result);
  })
  .openapi(resend, async (c) => {
    const result = await resendOtpCode(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return ok(c, result);
  })
  .openapi(legacyResend, async (c) => {
    const { sessionId, expiresAt, sent } = await resendOtpCode(
      c.env,
      caller(c.var.credential.accountId),
      c.req.valid('json'),
    );
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
  // 9. History
  .openapi(history, async (c) => {
    const verifications = await otpHistory(c.env, c.var.credential.accountId, 'instant', c.req.valid('query').limit);
    return ok(c, { verifications });
  })
  // 10. Send (no `email` in the response)
  .openapi(legacySend, async (c) => {
    const { sessionId, expiresAt, sent } = await sendOtp(
      c.env,
      caller(c.var.credential.accountId),
      c.req.valid('json'),
    );
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
