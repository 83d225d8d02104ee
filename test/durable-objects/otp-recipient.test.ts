// OtpRecipient: every session and both per-recipient OTP limits of one recipient in one object
// (decisions.md "One-time codes", "Rate limits"). Route behaviour is in test/routes/otp/.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { FLUSH_AFTER_MS } from '../../src/durable-objects/session-outbox';
import { newSessionId, sessionObjectIdOf } from '../../src/ids';
import type { NewOtpSession } from '../../src/otp/session';
import { accountDb } from '../support/account-db';
import { call, expectError, newAccount, uniqueAddress } from '../support/api';
import { KEEP_AFTER_EXPIRY_MS, SESSION_ID, sendAndRead, sessionStub, wrongCode } from '../support/otp';
import type { OtpSent } from '../support/responses';

const SEND = '/api/v1/instant-otp/send';
const VERIFY = '/api/v1/instant-otp/verify';

/** The windows alone (no doubling wait: its own tests set one). */
const SEND_LIMIT = {
  window: { limit: 3, windowSeconds: 600 },
  day: { limit: 100, windowSeconds: 86_400 },
  backoffSeconds: 0,
};
const FAILURE_LIMIT = { limit: 2, windowSeconds: 3600 };
/** The longest window a recipient keeps hits for: its day's sends. */
const DAY_MS = 86_400_000;

function recipient() {
  const id = env.OTP_RECIPIENT.idFromName(`acc_test:${crypto.randomUUID()}@example.com`);
  return { id, stub: env.OTP_RECIPIENT.get(id) };
}

function newSession(objectId: DurableObjectId, overrides: Partial<NewOtpSession> = {}): NewOtpSession {
  return {
    sessionId: newSessionId(objectId.toString()),
    accountId: 'acc_test',
    channel: 'instant',
    email: 'ann@example.com',
    codeHash: 'a'.repeat(64),
    digits: 6,
    mail: { subject: 'Your code', from: { email: 'no-reply@postcode.dev', name: null } },
    expiresAt: Date.now() + 600_000,
    maxAttempts: 5,
    ...overrides,
  };
}

const attempt = (sessionId: string, codeHash: string) => ({
  sessionId,
  accountId: 'acc_test',
  channel: 'instant' as const,
  email: 'ann@example.com',
  codeLength: 6,
  codeHash,
});

/** What a wrong code answers, with the session's account and address (for the lock event). */
const wrongOutcome = (attemptsLeft: number) => ({
  result: 'wrong',
  attemptsLeft,
  accountId: 'acc_test',
  email: 'ann@example.com',
});

const storedSessions = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_instance, state) =>
    state.storage.sql.exec<{ id: string }>('SELECT id FROM otp_sessions ORDER BY id').toArray(),
  );

describe('sessions are sharded by recipient', () => {
  it("a session id names its recipient's object: one object per account and address (any case), another for anyone else", async () => {
    const { publicToken } = await newAccount();
    const other = await newAccount();
    const email = uniqueAddress('shard');
    const objectOf = (sessionId: string) => {
      expect(sessionId).toMatch(SESSION_ID);
      return sessionObjectIdOf(sessionId);
    };

    const first = await sendAndRead(SEND, publicToken, email);
    const upperCase = await call<OtpSent>('POST', SEND, { token: publicToken, body: { email: email.toUpperCase() } });
    expect(upperCase.status).toBe(200);
    const second = { sessionId: upperCase.json.data.sessionId };
    const otherAddress = await sendAndRead(SEND, publicToken, uniqueAddress('shard-other'));
    const otherAccount = await sendAndRead(SEND, other.publicToken, email);
    expect(first.sessionId).toMatch(SESSION_ID);
    expect(first.sessionId).not.toBe(second.sessionId);
    expect(objectOf(second.sessionId)).toBe(objectOf(first.sessionId));
    expect(objectOf(otherAddress.sessionId)).not.toBe(objectOf(first.sessionId));
    expect(objectOf(otherAccount.sessionId)).not.toBe(objectOf(first.sessionId));
    expect((await storedSessions(sessionStub(first.sessionId))).map((s) => s.id).sort()).toEqual(
      [first.sessionId, second.sessionId].sort(),
    );
  });

  it('a session id pointing at another object, or at no valid object, is 404, never 500', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('routing');
    const { sessionId, code } = await sendAndRead(SEND, publicToken, email);
    const random = sessionId.slice(69);
    const elsewhere = `otp_${env.OTP_RECIPIENT.idFromName('somebody-else').toString()}_${random}`;
    for (const forged of [elsewhere, `otp_${'0'.repeat(64)}_${random}`, `otp_${'f'.repeat(64)}_${random}`]) {
      expectError(
        await call('POST', VERIFY, { token: publicToken, body: { sessionId: forged, email, code } }),
        404,
        'SESSION_NOT_FOUND',
      );
    }
    expect((await call('POST', VERIFY, { token: publicToken, body: { sessionId, email, code } })).json).toEqual({
      success: true,
      data: { verified: true },
    });
  });
});

describe('OtpRecipient.start', () => {
  it('20 concurrent sends with a limit of 3 → exactly 3 sessions stored; refused sends store nothing', async () => {
    const { id, stub } = recipient();
    const sessions = Array.from({ length: 20 }, () => newSession(id));
    const decisions = await Promise.all(sessions.map((s) => stub.start(s, SEND_LIMIT)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
    const stored = (await storedSessions(stub)).map((s) => s.id);
    expect(stored.sort()).toEqual(
      sessions
        .filter((_, i) => decisions[i]!.allowed)
        .map((s) => s.sessionId)
        .sort(),
    );
    const refused = decisions.find((d) => !d.allowed)!;
    expect(refused).toMatchObject({ limit: 3, remaining: 0 });
    expect(refused.resetSeconds).toBeGreaterThan(590);
  });

  it('the send count survives an eviction', async () => {
    const { id, stub } = recipient();
    for (let i = 0; i < 3; i++) expect((await stub.start(newSession(id), SEND_LIMIT)).allowed).toBe(true);
    await evictDurableObject(stub);
    expect((await stub.start(newSession(id), SEND_LIMIT)).allowed).toBe(false);
  });

  it("the day's cap refuses when reached though the 10 minutes have room; a refused send is counted in neither", async () => {
    const { id, stub } = recipient();
    const limits = { ...SEND_LIMIT, day: { limit: 2, windowSeconds: 86_400 } };
    for (let i = 0; i < 2; i++) expect((await stub.start(newSession(id), limits)).allowed).toBe(true);
    const refused = await stub.start(newSession(id), limits);
    expect(refused).toMatchObject({ allowed: false, limit: 2, remaining: 0 });
    expect(refused.resetSeconds).toBeGreaterThan(86_000);
    // The day's hits outlive an eviction (persisted), and the refusal took nothing from the 10 minutes' room.
    await evictDurableObject(stub);
    const roomier = { ...limits, day: { limit: 3, windowSeconds: 86_400 } };
    expect((await stub.start(newSession(id), roomier)).allowed).toBe(true);
    expect((await stub.start(newSession(id), roomier)).allowed).toBe(false);
    expect(await storedSessions(stub)).toHaveLength(3);
  });
});

describe('OtpRecipient: the doubling wait', () => {
  const WAIT = { ...SEND_LIMIT, window: { limit: 10, windowSeconds: 600 }, backoffSeconds: 30 };

  /** Moves every send of the streak `seconds` into the past (and drops what the object holds in memory). */
  async function age(stub: DurableObjectStub, seconds: number) {
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE log_hits SET at = at - ? WHERE log = 'unverified'", seconds * 1000);
    });
    await evictDurableObject(stub);
  }

  it('two sends go at once; then 30 s, 60 s, 120 s after the last; a refused send is not counted', async () => {
    const { id, stub } = recipient();
    for (let i = 0; i < 2; i++) expect((await stub.start(newSession(id), WAIT)).allowed).toBe(true);
    for (const wait of [30, 60, 120]) {
      const refused = await stub.start(newSession(id), WAIT);
      expect(refused).toMatchObject({ allowed: false, limit: 10, remaining: 0 });
      expect(refused.resetSeconds).toBeGreaterThan(wait - 3);
      expect(refused.resetSeconds).toBeLessThanOrEqual(wait);
      // A refusal again while waiting: still counted nowhere, so the wait after it is not doubled twice.
      expect((await stub.start(newSession(id), WAIT)).allowed).toBe(false);
      await age(stub, wait - 5);
      expect((await stub.start(newSession(id), WAIT)).allowed).toBe(false);
      await age(stub, 5);
      expect((await stub.start(newSession(id), WAIT)).allowed).toBe(true);
    }
    expect(await storedSessions(stub)).toHaveLength(5);
  });

  it("a verified code starts the wait again; the day's cap still counts every send", async () => {
    const { id, stub } = recipient();
    const limits = { ...WAIT, day: { limit: 4, windowSeconds: 86_400 } };
    const first = newSession(id);
    expect((await stub.start(first, limits)).allowed).toBe(true);
    expect((await stub.start(newSession(id), limits)).allowed).toBe(true);
    expect((await stub.start(newSession(id), limits)).allowed).toBe(false);
    expect(await stub.verify(attempt(first.sessionId, first.codeHash), FAILURE_LIMIT)).toMatchObject({
      result: 'verified',
    });
    await evictDurableObject(stub); // the reset is stored, not only remembered
    expect((await stub.start(newSession(id), limits)).allowed).toBe(true);
    expect((await stub.start(newSession(id), limits)).allowed).toBe(true);
    // A wait runs again now, but the day's cap (4 sends) frees up last, so the refusal names it.
    const refused = await stub.start(newSession(id), limits);
    expect(refused).toMatchObject({ allowed: false, limit: 4 });
    expect(refused.resetSeconds).toBeGreaterThan(86_000);
  });

  it('the wait doubles to a day at most; a streak older than a day is forgotten', async () => {
    const { id, stub } = recipient();
    const long = { ...WAIT, backoffSeconds: 50_000 };
    for (let i = 0; i < 2; i++) expect((await stub.start(newSession(id), long)).allowed).toBe(true);
    await age(stub, 50_000);
    expect((await stub.start(newSession(id), long)).allowed).toBe(true);
    const refused = await stub.start(newSession(id), long);
    expect(refused.resetSeconds).toBeGreaterThan(86_000);
    expect(refused.resetSeconds).toBeLessThanOrEqual(86_400);
    await age(stub, 86_400);
    expect((await stub.start(newSession(id), long)).allowed).toBe(true);
    expect((await stub.start(newSession(id), long)).allowed).toBe(true);
    expect((await stub.start(newSession(id), long)).allowed).toBe(false);
  });
});

describe('OtpRecipient.verify', () => {
  it("wrong codes count against the recipient's failure limit, across its sessions; then even the right code → limited", async () => {
    const { id, stub } = recipient();
    const first = newSession(id);
    const second = newSession(id, { codeHash: 'b'.repeat(64) });
    await stub.start(first, SEND_LIMIT);
    await stub.start(second, SEND_LIMIT);
    expect(await stub.verify(attempt(first.sessionId, 'c'.repeat(64)), FAILURE_LIMIT)).toEqual(wrongOutcome(4));
    expect(await stub.verify(attempt(second.sessionId, 'c'.repeat(64)), FAILURE_LIMIT)).toEqual(wrongOutcome(4));
    await evictDurableObject(stub);
    const limited = await stub.verify(attempt(second.sessionId, second.codeHash), FAILURE_LIMIT);
    expect(limited).toMatchObject({ result: 'limited', decision: { allowed: false, limit: 2, remaining: 0 } });
  });

  it('a code of the wrong length is malformed: no attempt and no failure counted', async () => {
    const { id, stub } = recipient();
    const session = newSession(id);
    await stub.start(session, SEND_LIMIT);
    for (let i = 0; i < 3; i++) {
      expect(
        await stub.verify({ ...attempt(session.sessionId, 'c'.repeat(64)), codeLength: 4 }, FAILURE_LIMIT),
      ).toEqual({ result: 'malformed' });
    }
    expect(await stub.verify(attempt(session.sessionId, 'c'.repeat(64)), FAILURE_LIMIT)).toEqual(wrongOutcome(4));
    expect(await stub.verify(attempt(session.sessionId, 'c'.repeat(64)), FAILURE_LIMIT)).toEqual(wrongOutcome(3));
    expect(await stub.verify(attempt(session.sessionId, session.codeHash), FAILURE_LIMIT)).toMatchObject({
      result: 'limited',
    });
  });

  it('concurrent verifies with the right code: exactly one succeeds, and it reports the account', async () => {
    const { id, stub } = recipient();
    const session = newSession(id);
    await stub.start(session, SEND_LIMIT);
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () => stub.verify(attempt(session.sessionId, session.codeHash), FAILURE_LIMIT)),
    );
    expect(outcomes.filter((o) => o.result === 'verified')).toEqual([
      expect.objectContaining({ result: 'verified', accountId: 'acc_test', email: 'ann@example.com' }),
    ]);
    expect(outcomes.filter((o) => o.result === 'not_found')).toHaveLength(9);
  });

  it('the hosted page (no account) may verify; another account may not even see the session', async () => {
    const { id, stub } = recipient();
    const session = newSession(id, { channel: 'email_verification' });
    await stub.start(session, SEND_LIMIT);
    const base = { ...attempt(session.sessionId, session.codeHash), channel: 'email_verification' as const };
    expect(await stub.verify({ ...base, accountId: 'acc_other' }, FAILURE_LIMIT)).toEqual({ result: 'not_found' });
    expect(await stub.verify({ ...base, channel: 'instant' }, FAILURE_LIMIT)).toEqual({ result: 'not_found' });
    expect(await stub.verify({ ...base, accountId: null }, FAILURE_LIMIT)).toMatchObject({
      result: 'verified',
      accountId: 'acc_test',
    });
  });
});

describe('OtpRecipient alarm', () => {
  it('deletes only sessions past their keep time and comes back for the rest', async () => {
    const { id, stub } = recipient();
    const old = newSession(id);
    const live = newSession(id);
    const firstSend = Date.now();
    await stub.start(old, SEND_LIMIT);
    await stub.start(live, SEND_LIMIT);
    // A day later for `old` only (verified, the account's object has its fact): moved past its keep time by hand, then the alarm runs.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE otp_sessions SET expires_at = ?, state = 'verified' WHERE id = ?",
        Date.now() - KEEP_AFTER_EXPIRY_MS - 1000,
        old.sessionId,
      );
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await storedSessions(stub)).map((s) => s.id)).toEqual([live.sessionId]);
    const next = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    // The earliest clean-up still due: the first send's hits leave their logs a day (+1 s) after they were counted
    // (the longest window kept here, the day's sends).
    expect(next).not.toBeNull();
    expect(next!).toBeGreaterThanOrEqual(firstSend + DAY_MS);
    expect(next!).toBeLessThanOrEqual(Date.now() + DAY_MS + 1000);
    // The send count was not reset by the alarm.
    await stub.start(newSession(id), SEND_LIMIT);
    expect((await stub.start(newSession(id), SEND_LIMIT)).allowed).toBe(false);
  });

  it("a session that expired pending is recorded in the account's object as expired before its row goes", async () => {
    const { id, stub } = recipient();
    const session = newSession(id);
    await stub.start(session, SEND_LIMIT);
    const expiredAt = Date.now() - KEEP_AFTER_EXPIRY_MS - 1000;
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec('UPDATE otp_sessions SET expires_at = ? WHERE id = ?', expiredAt, session.sessionId);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    // Kept, with its fact owed to the account's object, and the alarm back within FLUSH_AFTER_MS to write it.
    expect((await storedSessions(stub)).map((s) => s.id)).toEqual([session.sessionId]);
    const next = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(next!).toBeLessThanOrEqual(Date.now() + FLUSH_AFTER_MS + 1000);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(
        'UPDATE otp_sessions SET fact_at = ? WHERE id = ?',
        Date.now() - FLUSH_AFTER_MS,
        session.sessionId,
      );
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const outcome = await accountDb('acc_test')
      .prepare('SELECT outcome, sent_at, ended_at FROM otp_outcomes WHERE session_id = ?')
      .bind(session.sessionId)
      .first();
    expect(outcome).toEqual({ outcome: 'expired', sent_at: expect.any(Number), ended_at: expiredAt });
    expect(await storedSessions(stub)).toEqual([]);
  });

  it('a send schedules the alarm no later than its first clean-up', async () => {
    const { id, stub } = recipient();
    const before = Date.now();
    await stub.start(newSession(id), SEND_LIMIT);
    const alarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeGreaterThan(before);
    expect(alarm!).toBeLessThanOrEqual(Date.now() + DAY_MS + 1000);
  });
  it('after the alarm has run with nothing left, the next send sets a new one (the remembered time is not stale)', async () => {
    const { id, stub } = recipient();
    await stub.start(newSession(id), SEND_LIMIT);
    // Everything past its keep time (the session locked, its account has its fact): the alarm deletes it all, sets nothing.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE otp_sessions SET expires_at = ?, state = 'locked'",
        Date.now() - KEEP_AFTER_EXPIRY_MS - 1000,
      );
      state.storage.sql.exec('UPDATE log_hits SET at = ?', Date.now() - DAY_MS - 1000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).toBeNull();
    await stub.start(newSession(id), SEND_LIMIT);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).not.toBeNull();
  });

  it('an object has its whole schema from its first call: one table for sessions, one for the limits', async () => {
    const { id, stub } = recipient();
    await stub.status(newSessionId(id.toString()), null, 'instant');
    const tables = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type IN ('table', 'index') ORDER BY name")
        .toArray()
        .map((r) => r.name)
        .filter((name) => !name.startsWith('_cf') && !name.startsWith('sqlite')),
    );
    expect(tables).toEqual(['log_hits', 'otp_sessions']);
  });
});

describe('wrong codes through the route', () => {
  it("count against the session's recipient even when the request names another address", async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('wrong-route');
    const { sessionId, code } = await sendAndRead(SEND, publicToken, email);
    const res = await call('POST', VERIFY, {
      token: publicToken,
      body: { sessionId, email: uniqueAddress('decoy'), code: wrongCode(code) },
    });
    expectError(res, 400, 'INVALID_CODE');
    const failures = await runInDurableObject(
      sessionStub(sessionId),
      (_instance, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM log_hits WHERE log = 'failures'").one().n,
    );
    expect(failures).toBe(1);
  });
});
