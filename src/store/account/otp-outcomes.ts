import type { OtpChannel } from '../../otp/session';
import type { AccountSql } from './object-sql';

/** How an OTP session ended, for the metrics (a trigger of schema-v1.ts counts it). */
export type OtpOutcome = {
  sessionId: string;
  accountId: string;
  channel: OtpChannel;
  outcome: 'verified' | 'locked' | 'expired';
  /** Epoch milliseconds. */
  sentAt: number;
  endedAt: number;
};

/** Statement: records a session's end once (a second write of the same session is ignored). */
export const otpOutcomeInsert = (db: AccountSql, o: OtpOutcome) =>
  db
    .prepare(
      `INSERT OR IGNORE INTO otp_outcomes (session_id, account_id, channel, outcome, sent_at, ended_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    )
    .bind(o.sessionId, o.accountId, o.channel, o.outcome, o.sentAt, o.endedAt);

/** Records how a session ended (once). */
export async function recordOtpOutcome(db: AccountSql, outcome: OtpOutcome): Promise<void> {
  await otpOutcomeInsert(db, outcome).run();
}

/** Why a send or resend was refused before a code was mailed, as the metrics count it. */
export const OTP_REFUSAL_REASONS = [
  'challenge_failed',
  'recipient_capped',
  'domain_capped',
  'address_not_allowed',
] as const;
export type OtpRefusalReason = (typeof OTP_REFUSAL_REASONS)[number];

/** Counts a refused send in the hour of `at` (epoch milliseconds), beside the sessions' counters. */
export async function countOtpRefusal(
  db: AccountSql,
  accountId: string,
  channel: OtpChannel,
  reason: OtpRefusalReason,
  at: number,
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO metric_counts (account_id, test, hour, metric, n) VALUES (?, 0, ?, ?, 1)
       ON CONFLICT DO UPDATE SET n = n + 1`,
    )
    .bind(accountId, Math.floor(at / 3_600_000) * 3_600_000, `otp.${channel}.refused.${reason}`)
    .run();
}
