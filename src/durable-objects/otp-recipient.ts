import { DurableObject } from 'cloudflare:workers';

export type OtpChannel = 'instant' | 'backend' | 'email_verification';

export type NewOtpSession = {
  accountId: string;
  channel: OtpChannel;
  email: string;
  codeHash: string;
  digits: number;
  expiresAt: number;
  maxAttempts: number;
};

export type VerifyAttempt = {
  /** null: the hosted page, which has no credential (the channel still has to match). */
  accountId: string | null;
  channel: OtpChannel;
  email: string;
  codeLength: number;
  codeHash: string;
};

export type VerifyOutcome =
  | { result: 'verified'; email: string; sentAt: number; verifiedAt: number }
  | { result: 'wrong'; attemptsLeft: number }
  | { result: 'malformed' }
  | { result: 'locked'; retryAfterSeconds: number }
  | { result: 'expired' }
  | { result: 'not_found' };

export type SessionStatus = {
  email: string;
  status: 'pending' | 'verified' | 'locked' | 'expired';
  expiresAt: number;
  verifiedAt: number | null;
};

type SessionRow = {
  account_id: string;
  channel: OtpChannel;
  email: string;
  code_hash: string;
  digits: number;
  expires_at: number;
  attempts: number;
  max_attempts: number;
  state: 'pending' | 'verified' | 'locked';
  created_at: number;
  verified_at: number | null;
};

/** Kept after expiry so a backend can still read the outcome of a hosted verification. */
const KEEP_AFTER_EXPIRY_MS = 24 * 3600_000;

function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * One OTP session per object (named by the session id). The code is never here, only its HMAC.
 * `verify` compares, counts and consumes with synchronous SQL and no await, so concurrent verifies
 * are serialised: one success at most, and no wrong guess goes uncounted.
 */
export class OtpSession extends DurableObject {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS session (
      id INTEGER PRIMARY KEY CHECK (id = 1), account_id TEXT NOT NULL, channel TEXT NOT NULL, email TEXT NOT NULL,
      code_hash TEXT NOT NULL, digits INTEGER NOT NULL, expires_at INTEGER NOT NULL, attempts INTEGER NOT NULL,
      max_attempts INTEGER NOT NULL, state TEXT NOT NULL, created_at INTEGER NOT NULL, verified_at INTEGER)`);
  }

  private row(): SessionRow | null {
    return this.ctx.storage.sql.exec<SessionRow>('SELECT * FROM session WHERE id = 1').toArray()[0] ?? null;
  }

  /** Starts the session; false if this id is already in use (ids are random, so only on a bug). */
  async create(session: NewOtpSession): Promise<boolean> {
    if (this.row()) return false;
    this.ctx.storage.sql.exec(
      `INSERT INTO session (id, account_id, channel, email, code_hash, digits, expires_at, attempts, max_attempts, state, created_at)
       VALUES (1, ?, ?, ?, ?, ?, ?, 0, ?, 'pending', ?)`,
      session.accountId,
      session.channel,
      session.email.toLowerCase(),
      session.codeHash,
      session.digits,
      session.expiresAt,
      session.maxAttempts,
      Date.now(),
    );
    await this.ctx.storage.setAlarm(session.expiresAt + KEEP_AFTER_EXPIRY_MS);
    return true;
  }

  /** Replaces the code of a pending session (a retried email carries a fresh code). */
  rotateCode(accountId: string, codeHash: string): boolean {
    const row = this.row();
    if (!row || row.account_id !== accountId || row.state !== 'pending' || Date.now() >= row.expires_at) return false;
    this.ctx.storage.sql.exec('UPDATE session SET code_hash = ? WHERE id = 1', codeHash);
    return true;
  }

  verify(attempt: VerifyAttempt): VerifyOutcome {
    const row = this.row();
    if (!row || row.channel !== attempt.channel || (attempt.accountId !== null && row.account_id !== attempt.accountId)) {
      return { result: 'not_found' };
    }
    if (row.state === 'verified') return { result: 'not_found' };
    if (Date.now() >= row.expires_at) return { result: 'expired' };
    if (row.state === 'locked') {
      // It stays locked until it expires; after that the session is gone (404).
      return { result: 'locked', retryAfterSeconds: Math.max(Math.ceil((row.expires_at - Date.now()) / 1000), 1) };
    }
    if (attempt.codeLength !== row.digits) return { result: 'malformed' };
    const matches = sameHash(attempt.codeHash, row.code_hash) && attempt.email.toLowerCase() === row.email;
    if (matches) {
      const verifiedAt = Date.now();
      this.ctx.storage.sql.exec(`UPDATE session SET state = 'verified', verified_at = ?, code_hash = '' WHERE id = 1`, verifiedAt);
      return { result: 'verified', email: row.email, sentAt: row.created_at, verifiedAt };
    }
    const attempts = row.attempts + 1;
    const locked = attempts >= row.max_attempts;
    this.ctx.storage.sql.exec('UPDATE session SET attempts = ?, state = ? WHERE id = 1', attempts, locked ? 'locked' : 'pending');
    return { result: 'wrong', attemptsLeft: row.max_attempts - attempts };
  }

  /** The account of a live session of this channel (the hosted page has no credential to tell it). */
  owner(channel: OtpChannel): string | null {
    const row = this.row();
    return row && row.channel === channel ? row.account_id : null;
  }

  status(accountId: string | null, channel: OtpChannel): SessionStatus | null {
    const row = this.row();
    if (!row || row.channel !== channel || (accountId !== null && row.account_id !== accountId)) return null;
    const expired = row.state !== 'verified' && Date.now() >= row.expires_at;
    return {
      email: row.email,
      status: expired ? 'expired' : row.state,
      expiresAt: row.expires_at,
      verifiedAt: row.verified_at,
    };
  }

  async alarm(): Promise<void> {
    this.ctx.storage.sql.exec('DELETE FROM session');
    await this.ctx.storage.deleteAlarm();
  }
}
