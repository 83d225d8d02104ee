import type { NewEmail } from '../db/emails';
import { getSettings } from '../db/settings';
import { releaseDailyRecipients, reserveDailyRecipients } from '../db/usage';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { enqueueEmail } from '../queue/producer';

function nextUtcMidnight(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

function dailyLimitReached(now: Date): ApiError {
  const resetAt = nextUtcMidnight(now);
  return new ApiError('DAILY_LIMIT_REACHED', 'The daily sending allowance is used up; it resets at resetAt (UTC midnight)', {
    resetAt: resetAt.toISOString(),
    headers: { 'Retry-After': String(Math.max(Math.ceil((resetAt.getTime() - now.getTime()) / 1000), 1)) },
  });
}

/**
 * Accepts a composed email: operator settings decide whether it waits (freeze mode holds NORMAL
 * mail) and, on route 1, whether the daily warm-up allowance has room for its recipients.
 */
export async function submitEmail(env: Bindings, email: NewEmail, options: { countTowardsAllowance: boolean }) {
  const settings = await getSettings(env.DB);
  const day = email.createdAt.slice(0, 10);
  const recipients = email.toAddresses.length;
  if (options.countTowardsAllowance && !(await reserveDailyRecipients(env.DB, day, recipients, settings.dailyAllowance))) {
    throw dailyLimitReached(new Date(email.createdAt));
  }
  try {
    await enqueueEmail(env, email, settings.frozen && email.priority === 'NORMAL');
  } catch (error) {
    if (options.countTowardsAllowance) await releaseDailyRecipients(env.DB, day, recipients);
    throw error;
  }
}
