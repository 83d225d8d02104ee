import { serverOtp } from '../auth/guards';
import { config } from '../config';
import { linkTo } from '../openapi/document';
import { resendOtpCode, sendOtp } from '../otp/engine';
import { hostedVerifyUrl } from '../otp/verify-page';
import { emailVerificationSendResponse, serverSendBody } from '../schemas/otp';
import { OTP_SENT, otpCaller, RESEND, SESSION_ID, sessionLinks, statusRoutes, verifyRoutes } from './otp-shared';
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
  .route(
    '/',
    statusRoutes({
      path: '/api/v1/email-verification/{sessionId}',
      tag: 'Email verification',
      summary: 'Outcome of an email verification (for the backend that started it)',
      channel: 'email_verification',
    }),
  );
