// Sign-in to the dashboard: an address, a code mailed through postcode's own backend OTP flow (sessions of the
// sign-in account), then a session. A non-member's address is answered exactly as a member's, and no mail goes.
import { waitUntil } from 'cloudflare:workers';
import { sha256Hex } from '../auth/crypto';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { newSecret, nowIso } from '../ids';
import { canonicalAddress } from '../mail/address';
import { hitBucket } from '../middleware/rate-limit';
import { newRecipientSessionId, sendOtp, verifyOtp } from '../otp/engine';
import { auditStatement } from '../store/control/audit-log';
import { type DashboardSession, insertSessionStatement } from '../store/control/dashboard-sessions';
import { membershipsOf } from '../store/control/members';

/** The account whose backend OTP sessions sign members in (created by migrations/0005_dashboard.sql). */
export const SIGN_IN_ACCOUNT = 'acc_postcode';
const CALLER = { accountId: SIGN_IN_ACCOUNT, channel: 'backend', rateLimitCode: 'RATE_LIMITED' } as const;

export const SIGN_IN_CODE_SECONDS = 600;
export const SESSION_DAYS = 30;

/** Addresses are compared lower-cased, as the OTP engine keys its recipients. */
export const memberAddress = (email: string) => canonicalAddress(email.trim());

export type SignInStarted = { sessionId: string; email: string };

/** Counts one hit of a sign-in bucket; a full bucket is the contract's 429 (the page shows its wait). */
async function countSignIn(env: Bindings, bucket: 'signin-ip' | 'signin-address', subject: string) {
  const decision = await hitBucket(env, bucket, subject);
  if (!decision.allowed) {
    throw new ApiError('RATE_LIMITED', 'Too many sign-in attempts: wait a few minutes and try again', {
      headers: { 'Retry-After': String(Math.max(decision.resetSeconds, 1)) },
    });
  }
}

/**
 * Mails a sign-in code to a member's address, after the answer: a member's answer and a stranger's make the
 * same hops and take the same time. A stranger's session id has the same shape but names no session, so no
 * code will ever match, and nothing is sent. A code mail that fails is retried as any code's is.
 */
export async function startSignIn(env: Bindings, request: { email: string; ip: string }): Promise<SignInStarted> {
  const email = memberAddress(request.email);
  await countSignIn(env, 'signin-ip', request.ip);
  await countSignIn(env, 'signin-address', email);
  const sessionId = newRecipientSessionId(env, SIGN_IN_ACCOUNT, email);
  if ((await membershipsOf(env.DB, email)).length > 0) {
    const code = {
      email,
      sessionId,
      expiresInSeconds: SIGN_IN_CODE_SECONDS,
      otpDigits: 6,
      subject: 'Your postcode sign-in code',
      verificationLine: 'Sign in to the postcode dashboard with this code:',
    };
    // Started on the next turn: begun now, its first D1 reads would go out before the answer does.
    const afterAnswer = new Promise((resolve) => setTimeout(resolve, 0));
    waitUntil(
      afterAnswer
        .then(() => sendOtp(env, CALLER, code))
        .catch((error) => console.error('sign-in code not sent', error)),
    );
  }
  return { sessionId, email };
}

/** A new session's cookie token (shown to the browser once) and its row. */
export type NewSession = { token: string; session: DashboardSession };

/**
 * Checks the code; a right one for an address that is still a member opens a session acting as its oldest
 * membership. Every failure (wrong, expired, locked, no such member) is the same null.
 */
export async function finishSignIn(
  env: Bindings,
  request: { sessionId: string; email: string; code: string; ip: string; userAgent: string | null },
): Promise<NewSession | null> {
  const email = memberAddress(request.email);
  await countSignIn(env, 'signin-ip', request.ip);
  const outcome = await verifyOtp(env, CALLER, { sessionId: request.sessionId, email, code: request.code });
  if (outcome.result !== 'verified') return null;
  const [membership] = await membershipsOf(env.DB, email);
  if (!membership) return null;
  const token = newSecret('pc_dash_');
  const expiresAt = nowIso(new Date(Date.now() + SESSION_DAYS * 86_400_000));
  const { session, statement } = insertSessionStatement(env.DB, {
    tokenHash: await sha256Hex(token),
    email,
    memberId: membership.id,
    expiresAt,
    userAgent: request.userAgent?.slice(0, 300) ?? null,
    ip: request.ip,
  });
  const fact = { actor: email, action: 'member.signed_in', target: session.id };
  await env.DB.batch([statement, auditStatement(env.DB, membership.accountId, fact)]);
  return { token, session };
}
