// The recipient object's outbox: a verification or a lock is kept with the fact itself, so a crash before
// the account's object learns of it loses nothing; the alarm writes it (history row and webhook event), once.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { newSessionId } from '../../src/ids';
import type { NewOtpSession } from '../../src/otp/session';
import { accountDb } from '../support/account-db';
import { call, codeFromInbox, eventually, newAccount, uniqueAddress } from '../support/api';
import type { OtpSent } from '../support/responses';
import { newWebhook, receivedAt, waitForEvents } from '../support/webhooks';

const LIMITS = {
  send: { window: { limit: 5, windowSeconds: 600 }, day: { limit: 50, windowSeconds: 86_400 }, backoffSeconds: 30 },
  failures: { limit: 50, windowSeconds: 3600 },
};

/** A session stored straight in a fresh recipient object of this account (no Worker in between). */
async function sessionOf(accountId: string) {
  const email = uniqueAddress('outbox');
  const id = env.OTP_RECIPIENT.idFromName(`${accountId}:${email}`);
  const stub = env.OTP_RECIPIENT.get(id);
  const session: NewOtpSession = {
    sessionId: newSessionId(id.toString()),
    accountId,
    channel: 'backend',
    email,
    codeHash: 'a'.repeat(64),
    digits: 6,
    mail: { subject: 'Your code', from: { email: 'no-reply@postcode.dev', name: null } },
    expiresAt: Date.now() + 600_000,
    maxAttempts: 2,
  };
  await stub.start(session, LIMITS.send);
  const attempt = (codeHash: string) => ({
    sessionId: session.sessionId,
    accountId,
    channel: 'backend' as const,
    email,
    codeLength: 6,
    codeHash,
  });
  return { stub, session, attempt };
}

const outboxRows = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ kind: string }>("SELECT json_extract(fact, '$.kind') AS kind FROM otp_sessions WHERE fact IS NOT NULL")
      .toArray(),
  );

/** Time passes: the facts are old enough for the alarm. */
const age = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec('UPDATE otp_sessions SET fact_at = fact_at - 120000 WHERE fact IS NOT NULL');
  });

/** When the object's alarm is due (null: none). */
const alarmOf = (stub: DurableObjectStub) => runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());

const historyRows = (accountId: string, sessionId: string) =>
  accountDb(accountId)
    .prepare('SELECT COUNT(*) AS n FROM otp_verifications WHERE session_id = ?')
    .bind(sessionId)
    .first<{ n: number }>();

describe('session outbox', () => {
  it("a verification the Worker never wrote (a crash) reaches the account's object and the webhook through the alarm, once", async () => {
    const { accountId, serverKey } = await newAccount();
    const { key } = await newWebhook(serverKey, ['otp.verified']);
    const { stub, session, attempt } = await sessionOf(accountId);
    expect(await stub.verify(attempt(session.codeHash), LIMITS.failures)).toMatchObject({ result: 'verified' });
    expect(await outboxRows(stub)).toEqual([{ kind: 'verified' }]);
    expect((await historyRows(accountId, session.sessionId))!.n).toBe(0);

    await age(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await outboxRows(stub)).toEqual([]);
    expect((await historyRows(accountId, session.sessionId))!.n).toBe(1);
    const [event] = await waitForEvents(key, ['otp.verified']);
    expect(event!.payload.data).toEqual({ sessionId: session.sessionId, email: session.email, channel: 'backend' });

    // A second write of the same fact (say the alarm ran after the engine had written it) adds nothing.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(
        'UPDATE otp_sessions SET fact = ?, fact_at = 0 WHERE id = ?',
        JSON.stringify({
          kind: 'verified',
          entry: {
            accountId,
            channel: 'backend',
            sessionId: session.sessionId,
            email: session.email,
            sentAt: new Date().toISOString(),
            verifiedAt: new Date().toISOString(),
          },
        }),
        session.sessionId,
      );
    });
    await runDurableObjectAlarm(stub);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await historyRows(accountId, session.sessionId))!.n).toBe(1);
    expect(await receivedAt(key)).toHaveLength(1);
  });

  it('a lock the Worker never reported reaches the webhook through the alarm', async () => {
    const { accountId, serverKey } = await newAccount();
    const { key } = await newWebhook(serverKey, ['otp.locked']);
    const { stub, session, attempt } = await sessionOf(accountId);
    await stub.verify(attempt('b'.repeat(64)), LIMITS.failures);
    expect(await outboxRows(stub)).toEqual([]);
    expect(await stub.verify(attempt('b'.repeat(64)), LIMITS.failures)).toMatchObject({ attemptsLeft: 0 });
    expect(await outboxRows(stub)).toEqual([{ kind: 'locked' }]);
    await age(stub);
    await runDurableObjectAlarm(stub);
    const [event] = await waitForEvents(key, ['otp.locked']);
    expect(event!.payload.data.sessionId).toBe(session.sessionId);
  });

  it('through the routes, the engine writes the fact and the outbox lets it go', async () => {
    const { accountId, serverKey } = await newAccount();
    const email = uniqueAddress('settled');
    const sent = await call<OtpSent>('POST', '/api/v1/backend-otp/send', { token: serverKey, body: { email } });
    const code = await codeFromInbox(email);
    await call('POST', '/api/v1/backend-otp/verify', {
      token: serverKey,
      body: { sessionId: sent.json.data.sessionId, email, code },
    });
    expect((await historyRows(accountId, sent.json.data.sessionId))!.n).toBe(1);
    const objectId = env.OTP_RECIPIENT.idFromString(sent.json.data.sessionId.split('_')[1]!);
    await eventually(
      async () => ((await outboxRows(env.OTP_RECIPIENT.get(objectId))).length === 0 ? true : undefined),
      'the outbox to settle',
    );
  });
  it('once the engine has written a verification, the alarm goes back to the clean-up: no wake a minute later', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('unbound');
    const sent = await call<OtpSent>('POST', '/api/v1/backend-otp/send', { token: serverKey, body: { email } });
    const stub = env.OTP_RECIPIENT.get(env.OTP_RECIPIENT.idFromString(sent.json.data.sessionId.split('_')[1]!));
    const cleanupAt = await alarmOf(stub);
    expect(cleanupAt).toBeGreaterThan(Date.now() + 3_500_000); // the send log's prune, an hour on
    const code = await codeFromInbox(email);
    await call('POST', '/api/v1/backend-otp/verify', {
      token: serverKey,
      body: { sessionId: sent.json.data.sessionId, email, code },
    });
    await eventually(async () => ((await outboxRows(stub)).length === 0 ? true : undefined), 'the outbox to settle');
    expect(await alarmOf(stub)).toBe(cleanupAt);
  });

  it('a fact still owed keeps the alarm early when another is let go; the last one lets it go back', async () => {
    const { accountId } = await newAccount();
    const { stub, session, attempt } = await sessionOf(accountId);
    const second = { ...session, sessionId: newSessionId(stub.id.toString()) };
    await stub.start(second, LIMITS.send);
    const cleanupAt = (await alarmOf(stub))!;

    expect(await stub.verify(attempt(session.codeHash), LIMITS.failures)).toMatchObject({ result: 'verified' });
    const wrong = { ...attempt('b'.repeat(64)), sessionId: second.sessionId };
    await stub.verify(wrong, LIMITS.failures);
    expect(await stub.verify(wrong, LIMITS.failures)).toMatchObject({ attemptsLeft: 0 });
    expect(await outboxRows(stub)).toHaveLength(2);
    const boundAt = (await alarmOf(stub))!;
    expect(boundAt).toBeLessThanOrEqual(Date.now() + 60_000);

    await stub.settle(session.sessionId, 'verified');
    expect(await alarmOf(stub)).toBe(boundAt); // the lock is still owed
    await stub.settle(second.sessionId, 'locked');
    // Back to the earliest clean-up: the send log's prune (the failures log's comes later).
    expect(await alarmOf(stub)).toBe(cleanupAt);
  });
});
