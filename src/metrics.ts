// What an account sent and how its codes converted, over a period, from the hourly counters that triggers keep
// (migrations/0006_metrics.sql, 0009_bounce_reason.sql): the metrics API and the dashboard's overview read the
// same figures.

import type { Bindings } from './env';
import { ApiError } from './errors';
import type { OtpChannel } from './otp/session';
import { accountStore } from './store/account/client';
import { OTP_REFUSAL_REASONS, type OtpRefusalReason } from './store/account/otp-outcomes';

/** `bouncedSenderProblem`: of `bounced`, those for a reason that is the sender's (SENDER_PROBLEM_REASONS). */
export const EMAIL_METRICS = [
  'queued',
  'sent',
  'delivered',
  'bounced',
  'bouncedSenderProblem',
  'complained',
  'failed',
  'suppressed',
] as const;
export type EmailMetric = (typeof EMAIL_METRICS)[number];
export type EmailCounts = Record<EmailMetric, number>;
/** The figure each counter of metric_counts adds to (the trigger spells a two-word name in snake case). */
const EMAIL_COUNTERS = new Map<string, EmailMetric>(
  EMAIL_METRICS.map((metric) => [metric === 'bouncedSenderProblem' ? 'bounced_sender_problem' : metric, metric]),
);

export const OTP_CHANNELS = ['instant', 'backend', 'email_verification'] as const;
/** The bounds (seconds) of the time-to-verify buckets, in order; beyond the last: `inf`. */
const VERIFY_BOUNDS = [10, 30, 60, 120, 300, 600, 1800, 3600] as const;

export type Granularity = 'day' | 'hour';
/** The longest period a request may ask for: 92 days, or 14 days by the hour. */
export const MAX_SPAN_DAYS: Record<Granularity, number> = { day: 92, hour: 14 };

/** A period from a request's `from`, `to` and `granularity`; the defaults end now. 400 for one out of bounds. */
export function periodOf(query: { from?: Date; to?: Date; granularity: Granularity }) {
  const to = query.to ?? new Date();
  const from = query.from ?? new Date(to.getTime() - (query.granularity === 'day' ? 7 : 1) * 86_400_000);
  if (from >= to) throw new ApiError('INVALID_INPUT', 'from: must be before to');
  const maxDays = MAX_SPAN_DAYS[query.granularity];
  if (to.getTime() - from.getTime() > maxDays * 86_400_000) {
    throw new ApiError('INVALID_INPUT', `from: at most ${maxDays} days before to by the ${query.granularity}`);
  }
  return { from, to, granularity: query.granularity };
}
const BUCKET_MS: Record<Granularity, number> = { day: 86_400_000, hour: 3_600_000 };

export type OtpFunnel = {
  sent: number;
  verified: number;
  locked: number;
  expired: number;
  /** verified / sent; null when none was sent. */
  conversionRate: number | null;
  /** The bound of the time-to-verify bucket holding the median; null when none verified or beyond an hour. */
  medianSecondsToVerify: number | null;
  /** Sends and resends refused in the period, by reason (nothing was mailed). */
  refused: Record<OtpRefusalReason, number>;
};

export type Metrics = {
  from: string;
  to: string;
  granularity: Granularity;
  emails: {
    totals: EmailCounts;
    /** Shares of `sent` (recipients); null when none was sent. */
    rates: { delivered: number | null; bounced: number | null; complained: number | null };
    series: ({ start: string } & EmailCounts)[];
  };
  otp: Record<OtpChannel, OtpFunnel>;
};

const zeroCounts = (): EmailCounts => ({
  queued: 0,
  sent: 0,
  delivered: 0,
  bounced: 0,
  bouncedSenderProblem: 0,
  complained: 0,
  failed: 0,
  suppressed: 0,
});

const share = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

/** The period as whole buckets: `from` down to its bucket's start, `to` up to the end of its bucket. */
export function alignedPeriod(from: Date, to: Date, granularity: Granularity) {
  const size = BUCKET_MS[granularity];
  const start = Math.floor(from.getTime() / size) * size;
  const end = Math.ceil(to.getTime() / size) * size;
  return { start, end: Math.max(end, start + size), size };
}

function funnelOf(counts: Map<string, number>, channel: OtpChannel): OtpFunnel {
  const count = (name: string) => counts.get(`otp.${channel}.${name}`) ?? 0;
  const verified = count('verified');
  let median: number | null = null;
  let seen = 0;
  for (const bound of VERIFY_BOUNDS) {
    seen += count(`verify_le_${bound}`);
    if (verified > 0 && seen * 2 >= verified) {
      median = bound;
      break;
    }
  }
  const sent = count('sent');
  return {
    sent,
    verified,
    locked: count('locked'),
    expired: count('expired'),
    conversionRate: share(verified, sent),
    medianSecondsToVerify: median,
    refused: Object.fromEntries(OTP_REFUSAL_REASONS.map((reason) => [reason, count(`refused.${reason}`)])) as Record<
      OtpRefusalReason,
      number
    >,
  };
}

/** The metrics of an account's mode (test keys see test mail only, and no codes) over [from, to). */
export async function readMetrics(
  env: Pick<Bindings, 'DB' | 'ACCOUNT_STORE'>,
  accountId: string,
  test: boolean,
  period: { from: Date; to: Date; granularity: Granularity },
): Promise<Metrics> {
  const { start, end, size } = alignedPeriod(period.from, period.to, period.granularity);
  const rows = await accountStore(env, accountId).hourCounts(accountId, test, start, end);
  const buckets = Array.from({ length: (end - start) / size }, (_, i) => ({
    start: new Date(start + i * size).toISOString(),
    ...zeroCounts(),
  }));
  const totals = zeroCounts();
  const otpCounts = new Map<string, number>();
  for (const row of rows) {
    const metric = EMAIL_COUNTERS.get(row.metric);
    if (metric) {
      buckets[Math.floor((row.hour - start) / size)]![metric] += row.n;
      totals[metric] += row.n;
    } else {
      otpCounts.set(row.metric, (otpCounts.get(row.metric) ?? 0) + row.n);
    }
  }
  return {
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
    granularity: period.granularity,
    emails: {
      totals,
      rates: {
        delivered: share(totals.delivered, totals.sent),
        bounced: share(totals.bounced, totals.sent),
        complained: share(totals.complained, totals.sent),
      },
      series: buckets,
    },
    otp: {
      instant: funnelOf(otpCounts, 'instant'),
      backend: funnelOf(otpCounts, 'backend'),
      email_verification: funnelOf(otpCounts, 'email_verification'),
    },
  };
}
