// Facts of OTP sessions that D1 must learn (a verification's history row and event, a lock's event),
// kept in the recipient object in the same synchronous step as the fact itself, until D1 has them: the
// engine writes them at once and settles them here; the object's alarm writes any left behind by a crash.
import type { OtpChannel, VerificationEntry } from '../otp/session';
import type { SqlExec } from './hit-logs';

type SessionRef = { sessionId: string; email: string; channel: OtpChannel };

/** `sentAt` and `endedAt` are epoch milliseconds (a lock kept before they were recorded has neither). */
export type SessionFact =
  | { kind: 'verified'; entry: VerificationEntry }
  | { kind: 'locked'; accountId: string; session: SessionRef; sentAt?: number; endedAt?: number }
  | { kind: 'expired'; accountId: string; session: SessionRef; sentAt: number; endedAt: number };

/** A fact still here this long after it happened is written by the alarm. */
export const FLUSH_AFTER_MS = 60_000;

/** The outbox is two columns of the session's row (`fact`, `fact_at`): a session has one fact at most. */
export class SessionOutbox {
  constructor(private readonly sql: SqlExec) {}

  add(sessionId: string, fact: SessionFact, now: number): void {
    this.sql.exec('UPDATE otp_sessions SET fact = ?, fact_at = ? WHERE id = ?', JSON.stringify(fact), now, sessionId);
  }

  /**
   * Sessions that expired pending, past their keep time, get an `expired` fact: D1 learns how they ended
   * before their rows go (a row with a fact is not pruned).
   */
  addExpired(keptUntil: number, now: number): void {
    this.sql.exec(
      `UPDATE otp_sessions SET fact = json_object('kind', 'expired', 'accountId', account_id,
         'session', json_object('sessionId', id, 'email', email, 'channel', channel),
         'sentAt', created_at, 'endedAt', expires_at), fact_at = ?
       WHERE state = 'pending' AND expires_at <= ? AND fact IS NULL`,
      now,
      keptUntil,
    );
  }

  settle(sessionId: string, kind: SessionFact['kind']): void {
    this.sql.exec(
      "UPDATE otp_sessions SET fact = NULL, fact_at = NULL WHERE id = ? AND json_extract(fact, '$.kind') = ?",
      sessionId,
      kind,
    );
  }

  /** Facts older than `FLUSH_AFTER_MS / 2` (the engine has had its chance), with their keys. */
  due(now: number): { sessionId: string; fact: SessionFact }[] {
    return this.sql
      .exec<{ id: string; fact: string }>(
        'SELECT id, fact FROM otp_sessions WHERE fact_at <= ? ORDER BY fact_at',
        now - FLUSH_AFTER_MS / 2,
      )
      .toArray()
      .map((row) => ({ sessionId: row.id, fact: JSON.parse(row.fact) as SessionFact }));
  }

  /** When the alarm should come back for what is left (null: nothing left). */
  nextFlush(now: number): number | null {
    const oldest = this.sql.exec<{ at: number | null }>('SELECT MIN(fact_at) AS at FROM otp_sessions').one().at;
    return oldest === null ? null : Math.max(oldest + FLUSH_AFTER_MS, now + 1_000);
  }
}
