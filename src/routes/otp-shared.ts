// What the four OTP flavours share: examples, the verify and status routes, and the links a client follows.

import type { Credential } from '../auth/credential';
import { type Guard, serverOtp } from '../auth/guards';
import type { GuardedEnv } from '../env';
import { ApiError, type ErrorCode } from '../errors';
import { nowIso } from '../ids';
import type { RateLimitCode } from '../middleware/rate-limit';
import { linkTo } from '../openapi/document';
import { otpStatus, verifyError, verifyOtp } from '../otp/engine';
import type { OtpChannel } from '../otp/session';
import { resendBody, sessionIdParam, verificationStatusResponse, verifyBody, verifyResponse } from '../schemas/otp';
import { json, ok, route, router, type Tag } from './route';

export const SESSION_ID =
  'otp_5c1f0e9a7b3d42e8a6f0c4b2d9e17a3f8b6c0d5e2a9f4b7c1e3d6a8f0b2c4e6d_b3ghkq4mz2ytw6xrc7n5jd2pva';
export const OTP_SENT = {
  sessionId: SESSION_ID,
  expiresAt: '2026-11-21T22:55:00.000Z',
  email: 'ada@example.com',
  sent: true,
};
export const HISTORY_ENTRY = {
  id: 'ver_x2m4kq7fz3nwd5ty8hcb',
  email: 'ada@example.com',
  sentAt: '2026-11-21T22:45:00.000Z',
  verifiedAt: '2026-11-21T22:45:31.000Z',
};

/** What every flavour's resend route declares besides its path, guard and response. */
export const RESEND = {
  method: 'post',
  description:
    "Mails a fresh code for the same session. Every code mailed for it stays valid until the session expires; its attempts and lock are shared and never reset; the recipient's send limit counts it. 404 for an unknown, used, expired or locked session.",
  body: resendBody,
  bodyExample: { sessionId: SESSION_ID, email: 'ada@example.com' },
  errors: ['SESSION_NOT_FOUND', 'SMTP_NOT_CONFIGURED'] as ErrorCode[],
} as const;

/** Who is asking, for the engine: the account, the flavour's channel and the 429 code its routes use. */
export const otpCaller = (channel: OtpChannel, rateLimitCode: RateLimitCode) => (accountId: string) => ({
  accountId,
  channel,
  rateLimitCode,
});

/** The send response's links to the flavour's verify and resend routes (the email is the one sent to). */
export const sessionLinks = (flavourPath: string) => {
  const session = { requestBody: { sessionId: '$response.body#/data/sessionId', email: '$request.body#/email' } };
  return {
    verify: linkTo('post', `${flavourPath}/verify`, session),
    resend: linkTo('post', `${flavourPath}/resend`, session),
  };
};

/** POST …/verify of one flavour: 200 `{ verified: true }`, or the outcome's contract error. */
export function verifyRoutes<C extends Credential>(options: {
  path: string;
  tag: Tag;
  summary: string;
  guard: Guard<GuardedEnv<C>>;
  channel: OtpChannel;
}) {
  const verify = route({
    method: 'post',
    path: options.path,
    tag: options.tag,
    summary: options.summary,
    guard: options.guard,
    body: verifyBody,
    bodyExample: { sessionId: SESSION_ID, email: 'ada@example.com', code: '042917' },
    success: { status: 200, content: json(verifyResponse, { success: true, data: { verified: true } }) },
    errors: ['INVALID_CODE', 'SESSION_NOT_FOUND', 'RATE_LIMITED'],
  });
  return router().openapi(verify, async (c) => {
    const caller = { accountId: c.var.credential.accountId, channel: options.channel };
    const outcome = await verifyOtp(c.env, caller, c.req.valid('json'));
    if (outcome.result !== 'verified') throw verifyError(c.env, outcome);
    return ok(c, { verified: true });
  });
}

/**
 * GET a session's outcome with a server key: how the site's backend confirms what a browser reports (the browser is
 * never trusted on its own). Answers while the session is kept: until a day after it expires.
 */
export function statusRoutes(options: { path: string; tag: Tag; summary: string; channel: OtpChannel }) {
  const status = route({
    method: 'get',
    path: options.path,
    tag: options.tag,
    summary: options.summary,
    description:
      "The session of the key's account: pending, verified (with verifiedAt), locked or expired. 404 for an unknown session, another account's or another flavour's, and once it is no longer kept (a day after it expires).",
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
  return router().openapi(status, async (c) => {
    const { sessionId } = c.req.valid('param');
    const session = await otpStatus(c.env, c.var.credential.accountId, options.channel, sessionId);
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
}
