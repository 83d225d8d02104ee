// Retention (src/retention.ts) in the account's object: what expires after RETENTION_DAYS goes with everything
// of its own, what is waiting or a suppression never does, the object's alarm is set for when the oldest finished
// row expires, a run deletes a bounded amount, and a steady load over simulated weeks keeps the database bounded.
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newEmailId } from '../src/ids';
import { deleteExpired, RETENTION_BATCHES_PER_RUN, RETENTION_EMAIL_BATCH, RETENTION_ROW_BATCH } from '../src/retention';
import { accountObject } from '../src/store/account/client';
import type { ObjectSql } from '../src/store/account/object-sql';
import type { SqlStatement } from '../src/store/sql';
import { accountDb, runAccountAlarm } from './support/account-db';
import { call, newAccount } from './support/api';
import {
  accountRows,
  countedOf,
  DAY_MS,
  daysAgo,
  inAccountObject,
  rowsOfEmail,
  runRetention,
  seedEmail,
  seedEmails,
  seedHistory,
  subscribeToEmails,
} from './support/retention';

/** The object's alarm work now, with its own settings (RETENTION_DAYS 30). */
const wake = (accountId: string) => accountObject(env, accountId).wake();

const GONE = {
  emails: 0,
  recipients: 0,
  events: 0,
  tags: 0,
  attachments: 0,
  webhookDeliveries: 0,
  objects: 0,
  bodies: 0,
};

/** The accounts of the running test, whose objects' alarms are cleared after it. */
const accounts = new Set<string>();

afterEach(async () => {
  // An object with mail or webhook deliveries in flight sets its alarm for the grace (30 s). Cleared after each
  // test so that none goes off during the steady-load test: Date is faked in this isolate, objects included, so
  // the object would set its alarm in the past again and again until that test ends.
  for (const accountId of accounts) await inAccountObject(accountId, (_db, storage) => storage.deleteAlarm());
  accounts.clear();
});

async function newSubscribedAccount() {
  const { accountId } = await newAccount('Retention');
  accounts.add(accountId);
  await subscribeToEmails(accountId);
  return accountId;
}

describe('retention: finished emails', () => {
  it('deletes SENT, FAILED, CANCELED and SUPPRESSED emails older than RETENTION_DAYS with every row and file of theirs', async () => {
    const accountId = await newSubscribedAccount();
    const old = await Promise.all(
      (['SENT', 'FAILED', 'CANCELED', 'SUPPRESSED'] as const).map((status) =>
        seedEmail(accountId, status, daysAgo(31)),
      ),
    );
    const recent = await seedEmail(accountId, 'SENT', daysAgo(29));
    const before = await rowsOfEmail(old[0]!);
    expect(before).toEqual({
      ...GONE,
      emails: 1,
      recipients: 2,
      events: 2,
      tags: 1,
      attachments: 1,
      objects: 1,
      bodies: 1,
      webhookDeliveries: 2,
    });
    await wake(accountId);
    for (const email of old) expect(await rowsOfEmail(email), email.id).toEqual(GONE);
    expect(await rowsOfEmail(recent)).toEqual(before);
  });

  it('never a QUEUED or SCHEDULED email of the same age, never a suppression', async () => {
    const accountId = await newSubscribedAccount();
    const queued = await seedEmail(accountId, 'QUEUED', daysAgo(40));
    // A delivery in progress, so the alarm's outbox sweep leaves it where it is.
    await accountDb(accountId)
      .prepare('UPDATE emails SET lease_until = ?, lease_owner = ? WHERE id = ?')
      .bind(Date.now() + 3_600_000, 'retention-test', queued.id)
      .run();
    const scheduled = await seedEmail(accountId, 'SCHEDULED', daysAgo(40));
    const sent = await seedEmail(accountId, 'SENT', daysAgo(40));
    await accountDb(accountId)
      .prepare(
        `INSERT INTO suppressions (account_id, email, reason, source, created_at) VALUES (?, 'gone@example.com', '550', 'bounce', ?)`,
      )
      .bind(accountId, daysAgo(400))
      .run();
    await wake(accountId);
    expect(await rowsOfEmail(sent)).toEqual(GONE);
    for (const email of [queued, scheduled]) {
      expect(await rowsOfEmail(email), email.id).toMatchObject({
        emails: 1,
        recipients: 2,
        events: 1,
        tags: 1,
        objects: 1,
        bodies: 1,
      });
    }
    const suppressions = await accountDb(accountId)
      .prepare('SELECT COUNT(*) AS n FROM suppressions WHERE account_id = ?')
      .bind(accountId)
      .first<{ n: number }>();
    expect(suppressions!.n).toBe(1);
  });

  it('RETENTION_DAYS sets the period, and 0 keeps everything', async () => {
    const accountId = await newSubscribedAccount();
    const eightDays = await seedEmail(accountId, 'SENT', daysAgo(8));
    const sixDays = await seedEmail(accountId, 'FAILED', daysAgo(6));
    const ancient = await seedEmail(accountId, 'SENT', daysAgo(3000));
    await seedHistory(accountId, daysAgo(3000));
    await runRetention(accountId, { ...env, RETENTION_DAYS: '0' });
    for (const email of [eightDays, sixDays, ancient])
      expect(await rowsOfEmail(email)).toMatchObject({ emails: 1, objects: 1 });
    expect(await accountRows(accountId)).toMatchObject({ otpHistory: 1, webhookDeliveries: 6 });
    await runRetention(accountId, { ...env, RETENTION_DAYS: '7' });
    expect(await rowsOfEmail(eightDays)).toEqual(GONE);
    expect(await rowsOfEmail(ancient)).toEqual(GONE);
    expect(await rowsOfEmail(sixDays)).toMatchObject({ emails: 1, objects: 1, webhookDeliveries: 2 });
  });
});

describe("retention: the object's alarm", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is set for when the oldest finished row expires, and deletes it then', async () => {
    const accountId = await newSubscribedAccount();
    // Accepted through the object's operations, as the API stores mail: the object sets its alarm itself.
    const recentAt = daysAgo(29);
    const old = await seedEmail(accountId, 'SENT', daysAgo(31), { accepted: true });
    const recent = await seedEmail(accountId, 'SENT', recentAt, { accepted: true });
    const alarm = () => inAccountObject(accountId, (_db, storage) => storage.getAlarm());
    // Set for the grace of the mail it saw accepted.
    expect(await alarm()).toBeGreaterThan(Date.now());
    expect(await alarm()).toBeLessThanOrEqual(Date.now() + 30_000);
    // Its time comes (the grace of the deliveries it saw accepted): retention runs in it and plans the next wake.
    expect(await runAccountAlarm(accountId)).toBe(true);
    expect(await rowsOfEmail(old)).toEqual(GONE);
    expect(await rowsOfEmail(recent)).toMatchObject({ emails: 1, objects: 1, bodies: 1, webhookDeliveries: 2 });
    // 1 ms past its expiry: a run deletes what is older than its cutoff.
    const dueAt = Date.parse(recentAt) + 30 * DAY_MS + 1;
    expect(await alarm()).toBe(dueAt);
    // Then the alarm goes off at its time and takes the email with everything of its own; nothing is left to wait for.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(dueAt);
    expect(await runAccountAlarm(accountId)).toBe(true);
    expect(await rowsOfEmail(recent)).toEqual(GONE);
    expect(await alarm()).toBeNull();
  });
});

describe('retention: webhook deliveries, OTP history, idempotency records', () => {
  it('deletes settled deliveries and OTP history older than RETENTION_DAYS, idempotency records older than 24 h', async () => {
    const accountId = await newSubscribedAccount();
    await seedHistory(accountId, daysAgo(31));
    await seedHistory(accountId, daysAgo(2));
    await seedHistory(accountId, daysAgo(0.5));
    // An old delivery still pending (its next attempt due tomorrow) stays; settled ones go.
    const db = accountDb(accountId);
    await db.batch([
      db
        .prepare(
          `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, data, status, due_at, created_at, updated_at)
           SELECT 'msg_retention_' || value, (SELECT id FROM webhook_endpoints WHERE account_id = ?1), 'otp.verified', '{}',
             CASE value WHEN 0 THEN 'pending' WHEN 1 THEN 'delivered' ELSE 'failed' END,
             CASE value WHEN 0 THEN ?3 END, ?2, ?2
           FROM json_each('[0, 1, 2]')`,
        )
        .bind(accountId, Date.parse(daysAgo(31)), Date.parse(daysAgo(-1))),
      db
        .prepare(
          `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, data, status, created_at, updated_at)
           VALUES ('msg_retention_recent', (SELECT id FROM webhook_endpoints WHERE account_id = ?1), 'otp.verified', '{}',
             'delivered', ?2, ?2)`,
        )
        .bind(accountId, Date.parse(daysAgo(29))),
    ]);
    const counted = await countedOf(accountId);
    expect(counted).toBe(9); // each of the 3 sessions: sent, verified, and its time to verify
    await wake(accountId);
    expect(await accountRows(accountId)).toMatchObject({
      otpHistory: 2,
      otpOutcomes: 2,
      idempotencyRecords: 1,
      webhookDeliveries: 2,
    });
    // The metrics' counters outlive the facts they counted.
    expect(await countedOf(accountId)).toBe(counted);
    const left = await db
      .prepare(
        `SELECT id FROM webhook_deliveries WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE account_id = ?)
         ORDER BY id`,
      )
      .bind(accountId)
      .all<{ id: string }>();
    expect(left.results.map((r) => r.id)).toEqual(['msg_retention_0', 'msg_retention_recent']);
  });
});

describe('retention: the API reference', () => {
  it('every list that retention deletes from says so', async () => {
    const document = JSON.parse((await call('GET', '/api/v1/openapi.json')).text) as {
      paths: Record<string, { get: { description?: string } }>;
    };
    for (const path of [
      '/api/v1/emails',
      '/api/v1/emails/{emailId}',
      '/api/v1/instant-otp/verifications',
      '/api/v1/otp/verifications',
      '/api/v1/backend-otp/verifications',
      '/api/v1/webhooks/{webhookId}/deliveries',
    ]) {
      expect(document.paths[path]!.get.description, path).toContain(
        'Entries older than RETENTION_DAYS (default 30) are deleted',
      );
    }
  });
});

/** Expired SENT emails with a recipient and two events each, and expired OTP history, written in bulk. */
async function seedExpired(accountId: string, count: { emails: number; history: number }) {
  const ids = JSON.stringify(Array.from({ length: count.emails }, () => newEmailId(accountId)));
  const prefix = `bulk${crypto.randomUUID().slice(0, 8)}_`;
  const db = accountDb(accountId);
  await db.batch([
    db
      .prepare(
        `INSERT INTO emails (id, account_id, from_email, subject, status, created_at, updated_at)
         SELECT value, ?2, 'a@example.com', 'Bulk', 'SENT', ?3, ?3 FROM json_each(?1)`,
      )
      .bind(ids, accountId, Date.parse(daysAgo(45))),
    db
      .prepare(
        `INSERT INTO email_recipients (email_id, position, address, canonical, status)
         SELECT value, 0, 'bulk@example.com', 'bulk@example.com', 'SENT' FROM json_each(?1)`,
      )
      .bind(ids),
    db
      .prepare(
        `INSERT INTO email_events (email_id, seq, type, at)
         SELECT e.id, type.key + 1, type.value, e.created_at FROM emails AS e, json_each('["queued", "sent"]') AS type
         WHERE e.id IN (SELECT value FROM json_each(?1))`,
      )
      .bind(ids),
    db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
         INSERT INTO otp_verifications (id, account_id, channel, session_id, email, sent_at, verified_at)
         SELECT 'ver_' || ?1 || i, ?2, 'backend', 'otp_' || ?1 || i, 'bulk@example.com', ?4, ?4 FROM n`,
      )
      .bind(prefix, accountId, count.history, Date.parse(daysAgo(45))),
  ]);
}

describe('retention: bounded batches', () => {
  it('a run deletes at most its bound, each transaction at most one batch; the next runs take the rest', async () => {
    const { accountId } = await newAccount('Retention bulk');
    accounts.add(accountId);
    const perRun = RETENTION_EMAIL_BATCH * RETENTION_BATCHES_PER_RUN;
    const historyPerRun = RETENTION_ROW_BATCH * RETENTION_BATCHES_PER_RUN;
    const total = perRun + RETENTION_EMAIL_BATCH / 2;
    const history = 2 * historyPerRun + RETENTION_ROW_BATCH / 2;
    await seedExpired(accountId, { emails: total, history });
    // Every transaction of a run: how many statements, and how many rows its last one says were deleted.
    const transactions: { statements: number; deleted: number }[] = [];
    const counted = (target: ObjectSql) =>
      new Proxy(target, {
        get(target, property) {
          const value = Reflect.get(target, property);
          if (property !== 'batch') return typeof value === 'function' ? value.bind(target) : value;
          return async (statements: SqlStatement[]) => {
            const results = await target.batch(statements);
            transactions.push({
              statements: statements.length,
              deleted: (results.at(-1)!.results[0] as { n: number }).n,
            });
            return results;
          };
        },
      });
    const run = () => inAccountObject(accountId, (db) => deleteExpired(env, counted(db), new Date()));
    // An email batch's transaction: its children, the emails, then how many emails it deleted.
    const emailBatches = () => transactions.filter((t) => t.statements > 2).map((t) => t.deleted);
    await run();
    expect(emailBatches()).toEqual(Array(RETENTION_BATCHES_PER_RUN).fill(RETENTION_EMAIL_BATCH));
    // Any other transaction is one statement on one table, and deletes at most a row batch.
    for (const t of transactions.filter((t) => t.statements <= 2))
      expect(t.deleted).toBeLessThanOrEqual(RETENTION_ROW_BATCH);
    expect(await accountRows(accountId)).toMatchObject({
      emails: total - perRun,
      recipients: total - perRun,
      otpHistory: history - historyPerRun,
    });
    await run();
    expect(emailBatches().at(-1)).toBe(RETENTION_EMAIL_BATCH / 2);
    expect(await accountRows(accountId)).toMatchObject({
      emails: 0,
      recipients: 0,
      otpHistory: history - 2 * historyPerRun,
    });
    await run();
    expect(await accountRows(accountId)).toMatchObject({ otpHistory: 0 });
  });
});

describe('retention: steady load', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('eight simulated weeks of the same daily load keep the row count, R2 and the file size bounded', async () => {
    const accountId = await newSubscribedAccount();
    const retentionDays = 7;
    const emailsPerDay = 12;
    const bindings = { ...env, RETENTION_DAYS: String(retentionDays) };
    const start = Date.now() - 60 * DAY_MS;
    const sizes: number[] = [];
    vi.useFakeTimers({ toFake: ['Date'] });
    for (let day = 0; day < 56; day++) {
      vi.setSystemTime(start + day * DAY_MS);
      const times = Array.from({ length: emailsPerDay }, (_, i) =>
        new Date(start + day * DAY_MS - (emailsPerDay - i) * 60_000).toISOString(),
      );
      await seedEmails(
        accountId,
        times.map((at, i) => ({ status: i % 6 === 0 ? 'FAILED' : 'SENT', at })),
      );
      for (const at of times.filter((_, i) => i % 3 === 0)) await seedHistory(accountId, at);
      await runRetention(accountId, bindings);
      const rows = await accountRows(accountId);
      // Seeded just before the run: the day that reaches RETENTION_DAYS goes in the same run.
      const kept = Math.min(day + 1, retentionDays);
      expect(rows, `day ${day}`).toEqual({
        emails: emailsPerDay * kept,
        recipients: 2 * emailsPerDay * kept,
        webhookDeliveries: 2 * emailsPerDay * kept,
        otpHistory: (emailsPerDay / 3) * kept,
        otpOutcomes: (emailsPerDay / 3) * kept,
        idempotencyRecords: emailsPerDay / 3,
      });
      const objects = await env.ATTACHMENTS.list({ limit: 1000 });
      expect(objects.objects.filter((o) => o.key.includes('/em_')).length).toBeLessThanOrEqual(
        emailsPerDay * kept + 100, // the other tests' files
      );
      const bodies = await env.BODIES.list({ limit: 1000 });
      expect(bodies.objects.length).toBeLessThanOrEqual(emailsPerDay * kept + 100);
      // The account's database is its object's SQLite file.
      sizes.push(await inAccountObject(accountId, async (_db, storage) => storage.sql.databaseSize));
    }
    // Once retention has a full period to delete, freed pages are used again: the file stops growing.
    const steady = sizes.slice(3 * retentionDays);
    expect(Math.max(...steady)).toBeLessThanOrEqual(sizes[2 * retentionDays]! * 1.1);
  });
});
