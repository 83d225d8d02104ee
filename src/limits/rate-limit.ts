import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { clientIp } from '../auth/credentials';
import type { RateDecision } from '../durable-objects/rate-counter';
import type { AppEnv, Bindings } from '../env';
import { ApiError } from '../errors';

/** The buckets of decisions.md: each limit is a Worker var; counters are sharded per bucket and subject. */
export const BUCKETS = {
  'mail-key': { limitVar: 'RATE_MAIL_PER_KEY', fallback: 120, windowSeconds: 60 },
  'mail-ip': { limitVar: 'RATE_MAIL_PER_IP', fallback: 240, windowSeconds: 60 },
  read: { limitVar: 'RATE_READ_PER_CREDENTIAL', fallback: 600, windowSeconds: 60 },
} as const satisfies Record<string, { limitVar: keyof Bindings; fallback: number; windowSeconds: number }>;

export type BucketName = keyof typeof BUCKETS;

function bucketLimit(env: Bindings, bucket: BucketName): number {
  const configured = Number(env[BUCKETS[bucket].limitVar]);
  return Number.isFinite(configured) && configured >= 0 ? configured : BUCKETS[bucket].fallback;
}

/** Counts one hit in the counter object of this bucket and subject. */
export async function hitBucket(env: Bindings, bucket: BucketName, subject: string): Promise<RateDecision> {
  const stub = env.RATE_COUNTER.get(env.RATE_COUNTER.idFromName(`${bucket}:${subject}`));
  return stub.hit(bucketLimit(env, bucket), BUCKETS[bucket].windowSeconds);
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
export function applyDecisions(c: Context, decisions: RateDecision[], code: 'RATE_LIMITED' | 'OTP_RATE_LIMITED') {
  const refused = decisions.filter((d) => !d.allowed).sort((a, b) => b.resetSeconds - a.resetSeconds)[0];
  if (refused) {
    throw new ApiError(code, 'Too many requests: slow down and retry after the time in Retry-After', {
      headers: { ...rateHeaders(refused), 'Retry-After': String(refused.resetSeconds) },
    });
  }
  const tightest = decisions.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  for (const [name, value] of Object.entries(rateHeaders(tightest))) c.header(name, value);
}

/**
 * Route-level limits, declared after the auth guard: `mail` (routes 1, 3, 4: per key and per client IP)
 * and `read` (list and get routes: per credential).
 */
export const rateLimit = (kind: 'mail' | 'read') =>
  createMiddleware<AppEnv>(async (c, next) => {
    const credentialId = c.var.credential.id;
    const checks = [hitBucket(c.env, kind === 'mail' ? 'mail-key' : 'read', credentialId)];
    const ip = clientIp(c);
    if (kind === 'mail' && ip) checks.push(hitBucket(c.env, 'mail-ip', ip));
    applyDecisions(c, await Promise.all(checks), 'RATE_LIMITED');
    await next();
  });
