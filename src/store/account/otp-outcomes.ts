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
