import { DurableObject } from 'cloudflare:workers';
import { canonicalAddress } from '../mail/address';
import { writeSessionFact } from '../otp/facts';
import type {
  NewOtpSession,
  OtpChannel,
  ResendableSession,
  SessionStatus,
  VerifyAttempt,
  VerifyOutcome,
} from '../otp/session';
import { AlarmClock, HitLogs, type RateDecision, type WindowRule } from './hit-logs';
import { DAY_SECONDS, RecipientSends, type SendLimits } from './recipient-sends';
import {
  KEEP_AFTER_EXPIRY_MS,
  mailOf,
  RecipientSessions,
  type RecipientSql,
  recipientSql,
  type SessionRow,
} from './recipient-sessions';
import { FLUSH_AFTER_MS, type SessionFact, SessionOutbox } from './session-outbox';

/** The recipient's limit of wrong codes entered (decisions.md); its send limits are in RecipientSends. */
const FAILURES = 'failures';

function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Every OTP session of one recipient of one account, with that recipient's send and failure limits
 * (named by `account:email`; a session id carries this object's id, so it routes here alone). A send
 * is one call (count, then store) and so is a verify (limit, compare, count, consume). Codes are
 * never here, only their HMAC. Methods decide synchronously before any await, so concurrent calls
 * are serialised: one success at most, and no wrong guess goes uncounted.
 */
export class OtpRecipient extends DurableObject {
  private readonly sessions: RecipientSessions;
  private readonly logs: HitLogs;
  private readonly sends: RecipientSends;
  private readonly outbox: SessionOutbox;
  private readonly alarmClock: AlarmClock;
  private readonly sql: RecipientSql;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    const sql = recipientSql(ctx.storage.sql);
    this.sql = sql;
    this.sessions = new RecipientSessions(sql);
    this.logs = new HitLogs(sql, true, DAY_SECONDS);
    this.sends = new RecipientSends(this.logs);
    this.outbox = new SessionOutbox(sql);
    this.alarmClock = new AlarmClock(ctx.storage);
  }

  /** Counts a send against `limits`; if they have room, stores the session. Returns the decision. */
  async start(session: NewOtpSession, limits: SendLimits): Promise<RateDecision> {
    this.sql.ensureTables();
    const { decision, pruneAt } = this.sends.count(limits);
    if (!decision.allowed) return decision;
    this.sessions.insert(session, Date.now());
    await this.alarmClock.noLaterThan(Math.min(pruneAt ?? Infinity, session.expiresAt + KEEP_AFTER_EXPIRY_MS));
    return decision;
  }

  /** The session if it is the caller's, of its flavour, pending and not expired; null otherwise. */
  private pending(sessionId: string, accountId: string, channel?: OtpChannel): SessionRow | null {
    const row = this.sessions.row(sessionId);
    if (!row || row.account_id !== accountId || (channel !== undefined && row.channel !== channel)) return null;
    return row.state === 'pending' && Date.now() < row.expires_at ? row : null;
  }

  /**
   * Adds a code (and a link) to a pending session (a retried or resent email carries fresh ones); the
   * earlier ones stay valid.
   */
  addCode(sessionId: string, accountId: string, codeHash: string, linkHash?: string): boolean {
    const row = this.pending(sessionId, accountId);
    if (!row) return false;
    this.sessions.addCode(row, codeHash, linkHash);
    return true;
  }

  /** What a resend of this session needs; null when it cannot be resent (unknown, another's, used, expired, locked). */
  resendable(sessionId: string, accountId: string, channel: OtpChannel, email: string): ResendableSession | null {
    const row = this.pending(sessionId, accountId, channel);
    if (!row || row.email !== canonicalAddress(email)) return null;
    return { digits: row.digits, expiresAt: row.expires_at, mail: mailOf(row) };
  }

  /**
   * A resend: counts a send against the recipient's `limits` and, if they have room, adds the code. The
   * attempts and the lock are the session's and are not touched. Null when the session cannot be resent.
   */
  async resend(
    sessionId: string,
    accountId: string,
    hashes: { code: string; link?: string },
    limits: SendLimits,
  ): Promise<RateDecision | null> {
    const row = this.pending(sessionId, accountId);
    if (!row) return null;
    const { decision, pruneAt } = this.sends.count(limits);
    if (!decision.allowed) return decision;
    this.sessions.addCode(row, hashes.code, hashes.link);
    if (pruneAt !== null) await this.alarmClock.noLaterThan(pruneAt);
    return decision;
  }

  /** Checks a code; a wrong one counts against the session's attempts and the recipient's `failureLimit`. */
  async verify(attempt: VerifyAttempt, failureLimit: WindowRule): Promise<VerifyOutcome> {
    const row = this.sessions.row(attempt.sessionId);
    if (
      !row ||
      row.channel !== attempt.channel ||
      (attempt.accountId !== null && row.account_id !== attempt.accountId)
    ) {
      return { result: 'not_found' };
    }
    const failures = this.logs.peek(FAILURES, failureLimit);
    if (!failures.allowed) return { result: 'limited', decision: failures };
    if (row.state === 'verified') return { result: 'not_found' };
    const now = Date.now();
    if (now >= row.expires_at) return { result: 'expired' };
    if (row.state === 'locked') {
      // It stays locked until it expires; after that the session is gone (404).
      return { result: 'locked', retryAfterSeconds: Math.max(Math.ceil((row.expires_at - now) / 1000), 1) };
    }
    if (attempt.linkHash === undefined && attempt.codeLength !== row.digits) return { result: 'malformed' };
    const proof = attempt.linkHash ?? attempt.codeHash;
    const stored = (attempt.linkHash === undefined ? row.code_hash : row.link_hashes).split(',');
    // Every hash is compared (no early exit), so the time taken does not say which one matched.
    const matches = stored.reduce((found, hash) => sameHash(proof, hash) || found, false);
    const sameAddress = attempt.linkHash !== undefined || canonicalAddress(attempt.email) === row.email;
    if (matches && sameAddress) {
      this.sessions.markVerified(row.id, now);
      this.sends.verified();
      const entry = {
        accountId: row.account_id,
        channel: row.channel,
        sessionId: row.id,
        email: row.email,
        sentAt: new Date(row.created_at).toISOString(),
        verifiedAt: new Date(now).toISOString(),
      };
      this.outbox.add(row.id, { kind: 'verified', entry }, now);
      await this.alarmClock.bound(now + FLUSH_AFTER_MS);
      return {
        result: 'verified',
        accountId: row.account_id,
        email: row.email,
        sentAt: row.created_at,
        verifiedAt: now,
      };
    }
    const attempts = this.sessions.countWrongGuess(row);
    const { pruneAt } = this.logs.hit(FAILURES, failureLimit, now);
    if (attempts >= row.max_attempts) {
      const session = { sessionId: row.id, email: row.email, channel: row.channel };
      const fact = {
        kind: 'locked',
        accountId: row.account_id,
        session,
        sentAt: row.created_at,
        endedAt: now,
      } as const;
      this.outbox.add(row.id, fact, now);
    }
    // The fact's bound first: the clean-up's time, later, then changes nothing but what `settle` goes back to.
    if (attempts >= row.max_attempts) await this.alarmClock.bound(now + FLUSH_AFTER_MS);
    if (pruneAt !== null) await this.alarmClock.noLaterThan(pruneAt);
    return { result: 'wrong', attemptsLeft: row.max_attempts - attempts, accountId: row.account_id, email: row.email };
  }

  status(sessionId: string, accountId: string | null, channel: OtpChannel): SessionStatus | null {
    const row = this.sessions.row(sessionId);
    if (!row || row.channel !== channel || (accountId !== null && row.account_id !== accountId)) return null;
    const expired = row.state !== 'verified' && Date.now() >= row.expires_at;
    const language = mailOf(row)?.language;
    return {
      accountId: row.account_id,
      email: row.email,
      status: expired ? 'expired' : row.state,
      expiresAt: row.expires_at,
      verifiedAt: row.verified_at,
      ...(language ? { language } : {}),
    };
  }

  /**
   * The engine has written this fact to the account's object: nothing left for the alarm. With no other fact owed, the alarm
   * goes back to the clean-ups' time: a wake a minute later that would find nothing to do costs more worker
   * CPU than moving the alarm back here.
   */
  async settle(sessionId: string, kind: SessionFact['kind']): Promise<void> {
    this.outbox.settle(sessionId, kind);
    if (this.outbox.nextFlush(Date.now()) === null) await this.alarmClock.unbound();
  }

  /**
   * Writes facts a crash left behind to the account's object, deletes sessions past their keep time and expired limit hits;
   * comes back while anything is left.
   */
  async alarm(): Promise<void> {
    this.alarmClock.ringing();
    const now = Date.now();
    this.outbox.addExpired(now - KEEP_AFTER_EXPIRY_MS, now);
    for (const { sessionId, fact } of this.outbox.due(now)) {
      try {
        await writeSessionFact(this.env as Cloudflare.Env, fact);
        this.outbox.settle(sessionId, fact.kind);
      } catch (error) {
        console.error('session fact not written yet', sessionId, fact.kind, String(error));
      }
    }
    const due = [this.sessions.prune(now), this.logs.prune(now), this.outbox.nextFlush(now)].filter(
      (at) => at !== null,
    );
    if (due.length > 0) await this.ctx.storage.setAlarm(Math.min(...due));
  }
}
