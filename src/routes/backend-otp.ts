import { serverOtp } from '../auth/guards';
import { otpHistory, resendOtpCode, sendOtp } from '../otp/engine';
import { RETENTION_NOTE } from '../retention';
import { historyQuery, historyResponse, instantSendResponse, serverSendBody } from '../schemas/otp';
import { HISTORY_ENTRY, OTP_SENT, otpCaller, RESEND, sessionLinks, verifyRoutes } from './otp-shared';
import { json, ok, route, router } from './route';

const caller = otpCaller('backend', 'RATE_LIMITED');

const send = route({
  method: 'post',
  path: '/api/v1/backend-otp/send',
  tag: 'Backend OTP',
  summary: 'Send a backend OTP',
  guard: serverOtp,
  limit: { bucket: 'otp-send' },
  body: serverSendBody,
  bodyExample: { email: 'ada@example.com', subject: 'Your sign-in code', verificationLine: 'Sign in with this code:' },
  success: {
    status: 200,
    content: json(instantSendResponse, { success: true, data: OTP_SENT }),
    links: sessionLinks('/api/v1/backend-otp'),
  },
  errors: ['TEMPLATE_NOT_FOUND', 'SMTP_NOT_CONFIGURED'],
});

const resend = route({
  ...RESEND,
  path: '/api/v1/backend-otp/resend',
  tag: 'Backend OTP',
  summary: 'Resend a backend OTP (same session, a fresh code)',
  guard: serverOtp,
  limit: { bucket: 'otp-send' },
  success: { status: 200, content: json(instantSendResponse, { success: true, data: OTP_SENT }) },
});

const history = route({
  method: 'get',
  path: '/api/v1/backend-otp/verifications',
  tag: 'Backend OTP',
  summary: 'Backend OTP verification history',
  description: RETENTION_NOTE.entries,
  guard: serverOtp,
  limit: { bucket: 'read' },
  query: historyQuery,
  success: { status: 200, content: json(historyResponse, { success: true, data: { verifications: [HISTORY_ENTRY] } }) },
});

/** Routes 13-15: server to server, server_otp keys only; no IP allowlist. */
export const backendOtpRoutes = router()
  .openapi(send, async (c) => {
    const result = await sendOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return ok(c, result);
  })
  .openapi(resend, async (c) => {
    const result = await resendOtpCode(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    return ok(c, result);
  })
  .route(
    '/',
    verifyRoutes({
      path: '/api/v1/backend-otp/verify',
      tag: 'Backend OTP',
      summary: 'Verify a backend OTP',
      guard: serverOtp,
      channel: 'backend',
    }),
  )
  .openapi(history, async (c) => {
    const verifications = await otpHistory(c.env, c.var.credential.accountId, 'backend', c.req.valid('query').limit);
    return ok(c, { verifications });
  });
