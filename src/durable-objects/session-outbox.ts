// Facts of OTP sessions that D1 must learn (a verification's history row and event, a lock's event),
// kept in the recipient object in the same synchronous step as the fact itself, until D1 has them: the
// engine writes them at once and settles them here; the object's alarm writes any left behind by a crash.
import type { VerificationEntry } from '../db/otp-history';
import type { OtpChannel } from './otp-recipient';

export type SessionFact =
  | { kind: 'verified'; entry: VerificationEntry }
  | { kind: 'locked'; accountId: string; session: { sessionId: string; email: string; channel: OtpChannel } };

/** A fact still here this long after it happened is written by the alarm. */
export const FLUSH_AFTER_MS = 60_000;

/** The outbox's table, created by its owner together with its own tables. */
export const OUTBOX_SCHEMA = `CREATE TABLE IF NOT EXISTS outbox (
    session_id TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, kind));`;

export class SessionOutbox {
  constructor(private readonly sql: SqlStorage) {}

  add(sessionId: string, fact: SessionFact, now: number): void {
    this.sql.exec(
      'INSERT OR REPLACE INTO outbox (session_id, kind, body, created_at) VALUES (?, ?, ?, ?)',
      sessionId,
      fact.kind,
      JSON.stringify(fact),
      now,
    );
  }

  settle(sessionId: string, kind: SessionFact['kind']): void {
    this.sql.exec('DELETE FROM outbox WHERE session_id = ? AND kind = ?', sessionId, kind);
  }

  /** Facts older than `FLUSH_AFTER_MS / 2` (the engine has had its chance), with their keys. */
  due(now: number): { sessionId: string; fact: SessionFact }[] {
    return this.sql
      .exec<{ session_id: string; body: string }>(
        'SELECT session_id, body FROM outbox WHERE created_at <= ? ORDER BY created_at',
        now - FLUSH_AFTER_MS / 2,
      )
      .toArray()
      .map((row) => ({ sessionId: row.session_id, fact: JSON.parse(row.body) as SessionFact }));
  }

  /** When the alarm should come back for what is left (null: nothing left). */
  nextFlush(now: number): number | null {
    const oldest = this.sql.exec<{ at: number | null }>('SELECT MIN(created_at) AS at FROM outbox').one().at;
    return oldest === null ? null : Math.max(oldest + FLUSH_AFTER_MS, now + 1_000);
  }
}
