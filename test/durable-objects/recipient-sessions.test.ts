// A recipient object made before the one-table layout (sessions, session_mail, session_links, outbox) is
// moved to it on its next start: nothing of its sessions, links, limits or owed facts is lost.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { newSessionId } from '../../src/ids';
import type { OtpMailSettings } from '../../src/otp/session';
import { newAccount, uniqueAddress } from '../support/api';
import { newWebhook, waitForEvents } from '../support/webhooks';

const SEND_LIMIT = { limit: 3, windowSeconds: 600 };
const FAILURE_LIMIT = { limit: 50, windowSeconds: 3600 };

/** The layout every recipient object had before, as its constructor created it. */
const OLD_LAYOUT = `CREATE TABLE sessions (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, channel TEXT NOT NULL, email TEXT NOT NULL,
    code_hash TEXT NOT NULL, digits INTEGER NOT NULL, expires_at INTEGER NOT NULL, attempts INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL, state TEXT NOT NULL, created_at INTEGER NOT NULL, verified_at INTEGER);
  CREATE TABLE session_mail (session_id TEXT PRIMARY KEY, mail TEXT NOT NULL);
  CREATE TABLE session_links (session_id TEXT NOT NULL, token_hash TEXT NOT NULL);
  CREATE TABLE outbox (
    session_id TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, kind));
  CREATE TABLE log_hits (log TEXT NOT NULL, at INTEGER NOT NULL);
  CREATE INDEX log_hits_by_log ON log_hits (log, at);`;

const tablesOf = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .toArray()
      .map((r) => r.name)
      .filter((name) => !name.startsWith('_cf') && !name.startsWith('sqlite')),
  );

describe('a recipient object in the old layout', () => {
  it('keeps its sessions, mail settings, links, send count and owed facts after the move', async () => {
    const { accountId, serverKey } = await newAccount();
    const { key } = await newWebhook(serverKey, ['otp.locked']);
    const email = uniqueAddress('old-layout');
    const id = env.OTP_RECIPIENT.idFromName(`${accountId}:${email}`);
    const stub = env.OTP_RECIPIENT.get(id);
    const pending = newSessionId(id.toString());
    const verified = newSessionId(id.toString());
    const orphan = newSessionId(id.toString());
    const now = Date.now();
    const mail: OtpMailSettings = {
      subject: 'Your code',
      from: { email: 'no-reply@postcode.dev', name: null },
      language: 'de',
    };
    const verifiedEntry = {
      accountId,
      channel: 'email_verification',
      sessionId: verified,
      email,
      sentAt: new Date(now - 5000).toISOString(),
      verifiedAt: new Date(now - 4000).toISOString(),
    };
    const orphanLock = { kind: 'locked', accountId, session: { sessionId: orphan, email, channel: 'backend' } };

    // The object as the old code left it (an object makes no tables before its first statement).
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec(OLD_LAYOUT);
      const insert = `INSERT INTO sessions VALUES (?, ?, 'email_verification', ?, ?, 6, ?, 0, 5, ?, ?, ?)`;
      sql.exec(insert, pending, accountId, email, 'a'.repeat(64), now + 600_000, 'pending', now - 3000, null);
      sql.exec(insert, verified, accountId, email, '', now + 600_000, 'verified', now - 5000, now - 4000);
      sql.exec('INSERT INTO session_mail VALUES (?, ?)', pending, JSON.stringify(mail));
      sql.exec('INSERT INTO session_links VALUES (?, ?), (?, ?)', pending, 'b'.repeat(64), pending, 'c'.repeat(64));
      const fact = 'INSERT INTO outbox VALUES (?, ?, ?, ?)';
      sql.exec(fact, verified, 'verified', JSON.stringify({ kind: 'verified', entry: verifiedEntry }), now - 120_000);
      sql.exec(fact, orphan, 'locked', JSON.stringify(orphanLock), now - 120_000);
      for (let i = 0; i < 3; i++) sql.exec("INSERT INTO log_hits (log, at) VALUES ('sends', ?)", now - 1000);
    });
    await evictDurableObject(stub);

    // The next start moves everything into the one table and drops the old ones.
    const resendable = await stub.resendable(pending, accountId, 'email_verification', email);
    expect(resendable).toEqual({ digits: 6, expiresAt: now + 600_000, mail });
    expect(await tablesOf(stub)).toEqual(['log_hits', 'otp_sessions']);
    expect(await stub.status(verified, accountId, 'email_verification')).toMatchObject({ status: 'verified' });
    expect(await stub.status(pending, accountId, 'email_verification')).toMatchObject({ language: 'de' });

    // The three sends counted before the move still count.
    const next = newSessionId(id.toString());
    const refused = await stub.start(
      {
        sessionId: next,
        accountId,
        channel: 'email_verification',
        email,
        codeHash: 'd'.repeat(64),
        digits: 6,
        expiresAt: now + 600_000,
        maxAttempts: 5,
        mail,
      },
      SEND_LIMIT,
    );
    expect(refused.allowed).toBe(false);

    // Either of the session's two links verifies it.
    const byLink = {
      sessionId: pending,
      accountId,
      channel: 'email_verification' as const,
      email,
      codeLength: 6,
      codeHash: '',
      linkHash: 'c'.repeat(64),
    };
    expect(await stub.verify(byLink, FAILURE_LIMIT)).toMatchObject({ result: 'verified' });

    // The owed facts, the orphaned lock included, are written by the alarm and then forgotten.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec('UPDATE otp_sessions SET fact_at = fact_at - 120000 WHERE fact IS NOT NULL');
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const history = await env.DB.prepare('SELECT session_id FROM otp_verifications WHERE account_id = ? ORDER BY 1')
      .bind(accountId)
      .all<{ session_id: string }>();
    expect(history.results.map((r) => r.session_id).sort()).toEqual([pending, verified].sort());
    const [locked] = await waitForEvents(key, ['otp.locked']);
    expect(locked!.payload.data.sessionId).toBe(orphan);
    const owed = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec('SELECT id FROM otp_sessions WHERE fact IS NOT NULL').toArray(),
    );
    expect(owed).toEqual([]);
    expect(await stub.status(orphan, accountId, 'backend')).toBeNull();
  });

  it('a send moves the old layout before it counts, and a full send limit still refuses it', async () => {
    const { accountId } = await newAccount();
    const email = uniqueAddress('old-layout-send');
    const id = env.OTP_RECIPIENT.idFromName(`${accountId}:${email}`);
    const stub = env.OTP_RECIPIENT.get(id);
    const pending = newSessionId(id.toString());
    const now = Date.now();
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec(OLD_LAYOUT);
      const insert = `INSERT INTO sessions VALUES (?, ?, 'backend', ?, ?, 6, ?, 0, 5, 'pending', ?, NULL)`;
      sql.exec(insert, pending, accountId, email, 'a'.repeat(64), now + 600_000, now - 3000);
      for (let i = 0; i < 3; i++) sql.exec("INSERT INTO log_hits (log, at) VALUES ('sends', ?)", now - 1000);
    });
    await evictDurableObject(stub);

    const session = {
      sessionId: newSessionId(id.toString()),
      accountId,
      channel: 'backend' as const,
      email,
      codeHash: 'd'.repeat(64),
      digits: 6,
      expiresAt: now + 600_000,
      maxAttempts: 5,
      mail: { subject: 'Your code', from: { email: 'no-reply@postcode.dev', name: null } },
    };
    expect((await stub.start(session, SEND_LIMIT)).allowed).toBe(false);
    expect(await tablesOf(stub)).toEqual(['log_hits', 'otp_sessions']);
    expect(await stub.status(pending, accountId, 'backend')).toMatchObject({ status: 'pending', email });
    expect(await stub.status(session.sessionId, accountId, 'backend')).toBeNull();
  });
});

describe('a new recipient object', () => {
  it('makes its tables on its first statement, also when that call only reads', async () => {
    const { accountId } = await newAccount();
    const id = env.OTP_RECIPIENT.idFromName(`${accountId}:${uniqueAddress('new-object')}`);
    const stub = env.OTP_RECIPIENT.get(id);
    // Waking the object runs no statement (a verify wakes the object its send made: no schema check).
    expect(await tablesOf(stub)).toEqual([]);
    expect(await stub.status(newSessionId(id.toString()), accountId, 'backend')).toBeNull();
    expect(await tablesOf(stub)).toEqual(['log_hits', 'otp_sessions']);
  });
});
