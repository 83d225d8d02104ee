import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { clientIp } from '../auth/credentials';
import type { RateDecision, WindowRule } from '../durable-objects/hit-logs';
import type { AppEnv, Bindings } from '../env';
import { ApiError } from '../errors';

/**
 * The buckets of decisions.md: each limit is a Worker var. The first four are counted in RateCounter
 * objects, one per bucket and subject; the two per-recipient OTP buckets are counted by the
 * recipient's OtpRecipient object, together with its sessions (see the OTP engine).
 */
export const BUCKETS = {
  'mail-key': { limitVar: 'RATE_MAIL_PER_KEY', fallback: 120, windowSeconds: 60 },
  'mail-ip': { limitVar: 'RATE_MAIL_PER_IP', fallback: 240, windowSeconds: 60 },
  read: { limitVar: 'RATE_READ_PER_CREDENTIAL', fallback: 600, windowSeconds: 60 },
  'otp-send-credential': { limitVar: 'RATE_OTP_SEND_PER_CREDENTIAL', fallback: 60, windowSeconds: 60 },
  'otp-send-recipient': { limitVar: 'RATE_OTP_SEND_PER_RECIPIENT', fallback: 5, windowSeconds: 600 },
  'otp-fails-recipient': { limitVar: 'RATE_OTP_FAILS_PER_RECIPIENT', fallback: 20, windowSeconds: 3600 },
} as const satisfies Record<string, { limitVar: keyof Bindings; fallback: number; windowSeconds: number }>;

export type BucketName = keyof typeof BUCKETS;
/** Buckets with their own RateCounter objects (the others are counted with the OTP sessions). */
export type CounterBucket = Exclude<BucketName, 'otp-send-recipient' | 'otp-fails-recipient'>;

function bucketLimit(env: Bindings, bucket: BucketName): number {
  const raw = String(env[BUCKETS[bucket].limitVar] ?? '').trim();
  const configured = Number(raw);
  // An unset or empty var means the default, not a limit of 0.
  return raw !== '' && Number.isInteger(configured) && configured >= 0 ? configured : BUCKETS[bucket].fallback;
}

/** The bucket's limit as configured, and its window. */
export function bucketRule(env: Bindings, bucket: BucketName): WindowRule {
  return { limit: bucketLimit(env, bucket), windowSeconds: BUCKETS[bucket].windowSeconds };
}

/** The counter object holding this bucket's log for this subject. */
export function counterObject(env: Bindings, bucket: CounterBucket, subject: string) {
  return env.RATE_COUNTER.get(env.RATE_COUNTER.idFromName(`${bucket}:${subject}`));
}

/** Counts one hit in the counter object of this bucket and subject (refused hits are not counted). */
export async function hitBucket(env: Bindings, bucket: CounterBucket, subject: string): Promise<RateDecision> {
  const { limit, windowSeconds } = bucketRule(env, bucket);
  return counterObject(env, bucket, subject).hit(limit, windowSeconds, bucket);
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

/**
 * Route-level limits, declared after the auth guard: `mail` (routes 1, 3, 4: per key and per client
 * IP), `read` (lists and gets: per credential) and `otp-send` (OTP sends: per credential).
 */
export const rateLimit = (kind: keyof typeof ROUTE_BUCKETS, code: RateLimitCode = 'RATE_LIMITED') =>
  createMiddleware<AppEnv>(async (c, next) => {
    const checks = [hitBucket(c.env, ROUTE_BUCKETS[kind], c.var.credential.id)];
    const ip = clientIp(c);
    if (kind === 'mail' && ip) checks.push(hitBucket(c.env, 'mail-ip', ip));
    applyDecisions(c, await Promise.all(checks), code);
    await next();
  });
