import { serverOtp } from '../auth/guards';
import { config } from '../config';
import { ApiError } from '../errors';
import { nowIso } from '../ids';
import { linkTo } from '../openapi/document';
import { otpStatus, resendOtpCode, sendOtp } from '../otp/engine';
import { hostedVerifyUrl } from '../otp/verify-page';
import {
  emailVerificationSendResponse,
  serverSendBody,
  sessionIdParam,
  verificationStatusResponse,
} from '../schemas/otp';
import { OTP_SENT, otpCaller, RESEND, SESSION_ID, sessionLinks, verifyRoutes } from './otp-shared';
import { json, ok, route, router } from './route';

const caller = otpCaller('email_verification', 'RATE_LIMITED');

const send = route({
  method: 'post',
  path: '/api/v1/email-verification/send',
  tag: 'Email verification',
  summary: 'Send an email verification code',
  guard: serverOtp,
  limit: { bucket: 'otp-send' },
  body: serverSendBody,
  bodyExample: { email: 'ada@example.com' },
  success: {
    status: 200,
    content: json(emailVerificationSendResponse, {
      success: true,
      data: { ...OTP_SENT, hostedVerifyUrl: `https://verify.example.com/verify?sessionId=${SESSION_ID}` },
    }),
    links: {
      ...sessionLinks('/api/v1/email-verification'),
      status: linkTo('get', '/api/v1/email-verification/{sessionId}', {
        parameters: { sessionId: '$response.body#/data/sessionId' },
      }),
    },
  },
  errors: ['TEMPLATE_NOT_FOUND', 'SMTP_NOT_CONFIGURED'],
});

const resend = route({
  ...RESEND,
  path: '/api/v1/email-verification/resend',
  tag: 'Email verification',
  summary: 'Resend an email verification code (same session, a fresh code)',
  guard: serverOtp,
  limit: { bucket: 'otp-send' },
  success: {
    status: 200,
    content: json(emailVerificationSendResponse, {
      success: true,
      data: { ...OTP_SENT, hostedVerifyUrl: `https://verify.example.com/verify?sessionId=${SESSION_ID}` },
    }),
  },
});

const status = route({
  method: 'get',
  path: '/api/v1/email-verification/{sessionId}',
  tag: 'Email verification',
  summary: 'Outcome of an email verification (for the backend that started it)',
  guard: serverOtp,
  limit: { bucket: 'read' },
  params: sessionIdParam,
  success: {
    status: 200,
    content: json(verificationStatusResponse, {
      success: true,
      data: {
        sessionId: SESSION_ID,
        email: 'ada@example.com',
        status: 'verified',
        expiresAt: '2026-11-21T22:55:00.000Z',
        verifiedAt: '2026-11-21T22:46:02.000Z',
      },
    }),
  },
  errors: ['SESSION_NOT_FOUND'],
});

/** Routes 16-17 and the status route: email verification with a hosted verify page. */
export const emailVerificationRoutes = router()
  .openapi(send, async (c) => {
    const result = await sendOtp(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    const hosted = hostedVerifyUrl(config(c.env).publicBaseUrl, result.sessionId);
    return ok(c, { ...result, hostedVerifyUrl: hosted });
  })
  .openapi(resend, async (c) => {
    const result = await resendOtpCode(c.env, caller(c.var.credential.accountId), c.req.valid('json'));
    const hosted = hostedVerifyUrl(config(c.env).publicBaseUrl, result.sessionId);
    return ok(c, { ...result, hostedVerifyUrl: hosted });
  })
  .route(
    '/',
    verifyRoutes({
      path: '/api/v1/email-verification/verify',
      tag: 'Email verification',
      summary: 'Verify an email verification code',
      guard: serverOtp,
      channel: 'email_verification',
    }),
  )
  .openapi(status, async (c) => {
    const { sessionId } = c.req.valid('param');
    const session = await otpStatus(c.env, c.var.credential.accountId, 'email_verification', sessionId);
    if (!session) throw new ApiError('SESSION_NOT_FOUND', 'sessionId: no such session');
    const data = {
      sessionId,
      email: session.email,
      status: session.status,
      expiresAt: nowIso(new Date(session.expiresAt)),
      ...(session.verifiedAt ? { verifiedAt: nowIso(new Date(session.verifiedAt)) } : {}),
    };
    return ok(c, data);
  });
