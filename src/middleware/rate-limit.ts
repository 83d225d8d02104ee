import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Credential } from '../auth/credential';
import { clientIp } from '../auth/credentials';
import { config, type RateLimits } from '../config';
import type { RateDecision, WindowRule } from '../durable-objects/hit-logs';
import type { Bindings, GuardedEnv } from '../env';
import { ApiError } from '../errors';

/**
 * The buckets of decisions.md: each limit is a Worker var, parsed with its default in src/config.ts.
 * The first four and the sign-in buckets are counted in RateCounter objects, one per bucket and subject; the two
 * per-recipient OTP buckets are counted by the recipient's OtpRecipient object, together with its
 * sessions (see the OTP engine).
 */
export const BUCKETS = {
  'mail-key': { limit: 'mailPerKey', windowSeconds: 60 },
  'mail-ip': { limit: 'mailPerIp', windowSeconds: 60 },
  read: { limit: 'readPerCredential', windowSeconds: 60 },
  'otp-send-credential': { limit: 'otpSendPerCredential', windowSeconds: 60 },
  'otp-send-recipient': { limit: 'otpSendPerRecipient', windowSeconds: 600 },
  'otp-send-recipient-day': { limit: 'otpSendPerRecipientDay', windowSeconds: 86_400 },
  'otp-fails-recipient': { limit: 'otpFailsPerRecipient', windowSeconds: 3600 },
  // The dashboard's sign-in: every address submitted and every code tried (per IP), every code asked (per address).
  'signin-ip': { limit: 'signInPerIp', windowSeconds: 600 },
  'signin-address': { limit: 'signInPerAddress', windowSeconds: 600 },
} as const satisfies Record<string, { limit: keyof RateLimits; windowSeconds: number }>;

export type BucketName = keyof typeof BUCKETS;
/** Buckets with their own RateCounter objects (the others are counted with the OTP sessions). */
export type CounterBucket = Exclude<
  BucketName,
  'otp-send-recipient' | 'otp-send-recipient-day' | 'otp-fails-recipient'
>;

/** The bucket's limit as configured, and its window. */
export function bucketRule(env: Bindings, bucket: BucketName): WindowRule {
  const { limit, windowSeconds } = BUCKETS[bucket];
  return { limit: config(env).limits[limit], windowSeconds };
}

/** The counter object holding this bucket's log for this subject. */
export function counterObject(env: Bindings, bucket: CounterBucket, subject: string) {
  return env.RATE_COUNTER.get(env.RATE_COUNTER.idFromName(`${bucket}:${subject}`));
}

/** Counts `count` hits in the counter object of this bucket and subject (refused hits are not counted). */
export async function hitBucket(
  env: Bindings,
  bucket: CounterBucket,
  subject: string,
  count = 1,
): Promise<RateDecision> {
  const { limit, windowSeconds } = bucketRule(env, bucket);
  return counterObject(env, bucket, subject).hit(limit, windowSeconds, bucket, count);
}

function rateHeaders(decision: RateDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}

/**
 * Applies the decisions (the tightest one is reported in RateLimit-* headers); throws 429 with
 * Retry-After when any bucket is full.
 */
export type RateLimitCode = 'RATE_LIMITED' | 'OTP_RATE_LIMITED';

export function rateLimitError(code: RateLimitCode, decision: RateDecision, message?: string): ApiError {
  return new ApiError(code, message ?? 'Too many requests: slow down and retry after the time in Retry-After', {
    headers: { ...rateHeaders(decision), 'Retry-After': String(Math.max(decision.resetSeconds, 1)) },
  });
}

export function applyDecisions(c: Context, decisions: RateDecision[], code: RateLimitCode) {
  const refused = decisions.filter((d) => !d.allowed).sort((a, b) => b.resetSeconds - a.resetSeconds)[0];
  if (refused) throw rateLimitError(code, refused);
  const tightest = decisions.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  for (const [name, value] of Object.entries(rateHeaders(tightest))) c.header(name, value);
}

const ROUTE_BUCKETS = { mail: 'mail-key', read: 'read', 'otp-send': 'otp-send-credential' } as const;

/** The route-level limits a route declaration can name. */
export type RouteLimit = keyof typeof ROUTE_BUCKETS;

/**
 * Route-level limits, run after the guard: `mail` (routes 1, 3, 4: per key and per client IP),
 * `read` (lists and gets: per credential) and `otp-send` (OTP sends: per credential).
 */
export const rateLimit = (kind: RouteLimit, code: RateLimitCode = 'RATE_LIMITED') =>
  createMiddleware<GuardedEnv<Credential>>(async (c, next) => {
    await countHits(c, kind, 1, code);
    await next();
  });

/**
 * Counts `count` hits of a route-level limit for this request's credential (and client IP for mail). The
 * middleware counts one per request; the batch counts the rest of its emails once it knows how many.
 */
export async function countHits<E extends GuardedEnv<Credential>>(
  c: Context<E>,
  kind: RouteLimit,
  count: number,
  code: RateLimitCode = 'RATE_LIMITED',
) {
  if (count <= 0) return;
  const checks = [hitBucket(c.env, ROUTE_BUCKETS[kind], c.var.credential.id, count)];
  const ip = clientIp(c);
  if (kind === 'mail' && ip) checks.push(hitBucket(c.env, 'mail-ip', ip, count));
  applyDecisions(c, await Promise.all(checks), code);
}
