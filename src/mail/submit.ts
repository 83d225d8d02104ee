import type { NewEmail } from '../db/emails';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { enqueueEmail } from '../queue/producer';

function nextUtcMidnight(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

function dailyLimitReached(now: Date): ApiError {
  const resetAt = nextUtcMidnight(now);
  return new ApiError(
    'DAILY_LIMIT_REACHED',
    'The daily sending allowance is used up; it resets at resetAt (UTC midnight)',
    {
      resetAt: resetAt.toISOString(),
      headers: { 'Retry-After': String(Math.max(Math.ceil((resetAt.getTime() - now.getTime()) / 1000), 1)) },
    },
  );
}

/**
 * Accepts a composed email. Freeze mode holds NORMAL mail; on route 1 the daily warm-up allowance
 * must have room for its recipients. Settings, reservation and insert happen in one D1 transaction.
 */
export async function submitEmail(env: Bindings, email: NewEmail, options: { countTowardsAllowance: boolean }) {
  if (!(await enqueueEmail(env, email, options))) throw dailyLimitReached(new Date(email.createdAt));
}
