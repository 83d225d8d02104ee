// The OTP sessions of one recipient object: one row each, with its mail settings, the HMACs of its
// one-click links and the fact D1 has yet to learn (see session-outbox.ts). One table, because every
// first code to an address makes a new object, and each table or index it creates is a page and a
// schema row written on that first call (under send load, a large share of the worker's CPU).
import { canonicalAddress } from '../mail/address';
import type { NewOtpSession, OtpChannel, OtpMailSettings } from '../otp/session';
import { HIT_LOG_TABLE, type SqlExec } from './hit-logs';

export type SessionRow = {
  id: string;
  account_id: string;
  channel: OtpChannel;
  email: string;
  /** The HMACs of every code mailed for the session, comma-separated (each stays valid until expiry). */
  code_hash: string;
  /** The HMACs of its one-click links' tokens, comma-separated ('' when none). */
  link_hashes: string;
  digits: number;
  expires_at: number;
  attempts: number;
  max_attempts: number;
  state: 'pending' | 'verified' | 'locked';
  created_at: number;
  verified_at: number | null;
  /** JSON of OtpMailSettings. */
  mail: string | null;
};

/** Kept after expiry so a backend can still read the outcome of a hosted verification. */
export const KEEP_AFTER_EXPIRY_MS = 24 * 3600_000;

const SESSIONS_TABLE = `CREATE TABLE IF NOT EXISTS otp_sessions (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, channel TEXT NOT NULL, email TEXT NOT NULL,
    code_hash TEXT NOT NULL, link_hashes TEXT NOT NULL, digits INTEGER NOT NULL, expires_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL, state TEXT NOT NULL, created_at INTEGER NOT NULL,
    verified_at INTEGER, mail TEXT, fact TEXT, fact_at INTEGER);`;

/** Creates the object's tables (a no-op once they exist). */
function createRecipientTables(sql: SqlStorage): void {
  sql.exec(`${SESSIONS_TABLE}${HIT_LOG_TABLE}`);
}

const MISSING_TABLE = /no such table/;

/** The object's SQL (see `recipientSql`), and a way to make its tables before the first statement. */
export type RecipientSql = SqlExec & {
  /**
   * Makes the tables if the object has none yet. A send calls it first: a send is usually an object's first
   * call, and a statement that fails on a missing table costs more than this lookup.
   */
  ensureTables(): void;
};

/**
 * The object's SQL, making its tables when a statement finds one missing (a new object) and then running
 * that statement again. A statement that fails changes nothing, so running it
 * again is safe; an object that has its tables checks no schema on any call but a send (a verify wakes the
 * object its send made, so a check in the constructor ran on every verify).
 */
export function recipientSql(sql: SqlStorage): RecipientSql {
  let created = false;
  const create = () => {
    created = true;
    createRecipientTables(sql);
  };
  const exec = (query: string, ...bindings: unknown[]) => {
    try {
      return sql.exec(query, ...bindings);
    } catch (error) {
      if (created || !MISSING_TABLE.test(String(error))) throw error;
      create();
      return sql.exec(query, ...bindings);
    }
  };
  let looked = false;
  const ensureTables = () => {
    if (created || looked) return;
    looked = true;
    const found = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'otp_sessions'").toArray();
    if (found.length === 0) create();
  };
  return { exec: exec as SqlStorage['exec'], ensureTables };
}

export class RecipientSessions {
  constructor(private readonly sql: SqlExec) {}

  row(sessionId: string): SessionRow | null {
    return this.sql.exec<SessionRow>('SELECT * FROM otp_sessions WHERE id = ?', sessionId).toArray()[0] ?? null;
  }

  insert(session: NewOtpSession, now: number): void {
    this.sql.exec(
      `INSERT INTO otp_sessions (id, account_id, channel, email, code_hash, link_hashes, digits, expires_at,
         attempts, max_attempts, state, created_at, mail)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 'pending', ?, ?)`,
      session.sessionId,
      session.accountId,
      session.channel,
      canonicalAddress(session.email),
      session.codeHash,
      session.linkHash ?? '',
      session.digits,
      session.expiresAt,
      session.maxAttempts,
      now,
      JSON.stringify(session.mail),
    );
  }

  /** Another code (and link) for a pending session; the earlier ones stay valid. */
  addCode(row: SessionRow, codeHash: string, linkHash: string | undefined): void {
    const links = linkHash ? (row.link_hashes ? `${row.link_hashes},${linkHash}` : linkHash) : row.link_hashes;
    this.sql.exec(
      'UPDATE otp_sessions SET code_hash = ?, link_hashes = ? WHERE id = ?',
      `${row.code_hash},${codeHash}`,
      links,
      row.id,
    );
  }

  /** Used: no code or link of it is kept. */
  markVerified(sessionId: string, now: number): void {
    this.sql.exec(
      `UPDATE otp_sessions SET state = 'verified', verified_at = ?, code_hash = '', link_hashes = '' WHERE id = ?`,
      now,
      sessionId,
    );
  }

  /** A wrong guess: counted, and the session locked once its attempts are used up. */
  countWrongGuess(row: SessionRow): number {
    const attempts = row.attempts + 1;
    this.sql.exec(
      'UPDATE otp_sessions SET attempts = ?, state = ? WHERE id = ?',
      attempts,
      attempts >= row.max_attempts ? 'locked' : 'pending',
      row.id,
    );
    return attempts;
  }

  /**
   * Deletes sessions past their keep time whose fact D1 has (a fact still owed keeps its row). Returns
   * when the next one is due for deletion (null: none left).
   */
  prune(now: number): number | null {
    this.sql.exec('DELETE FROM otp_sessions WHERE expires_at <= ? AND fact IS NULL', now - KEEP_AFTER_EXPIRY_MS);
    const oldest = this.sql
      .exec<{ at: number | null }>('SELECT MIN(expires_at) AS at FROM otp_sessions WHERE fact IS NULL')
      .one().at;
    return oldest === null ? null : oldest + KEEP_AFTER_EXPIRY_MS;
  }
}

/** The mail settings a session was sent with (null: none kept). */
export function mailOf(row: SessionRow): OtpMailSettings | null {
  return row.mail ? (JSON.parse(row.mail) as OtpMailSettings) : null;
}
