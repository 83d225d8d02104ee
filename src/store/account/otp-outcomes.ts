import type { OtpChannel } from '../../otp/session';

/** How an OTP session ended, for the metrics (migrations/0006_metrics.sql counts it). */
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
export const otpOutcomeInsert = (db: D1Database, o: OtpOutcome) =>
  db
    .prepare(
      `INSERT OR IGNORE INTO otp_outcomes (session_id, account_id, channel, outcome, sent_at, ended_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    )
    .bind(o.sessionId, o.accountId, o.channel, o.outcome, o.sentAt, o.endedAt);
