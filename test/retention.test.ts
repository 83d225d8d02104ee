// Retention (src/retention.ts) through the scheduled handler: what expires after RETENTION_DAYS goes with
// everything of its own, what is waiting or a suppression never does, a run deletes a bounded amount, and
// a steady load over simulated weeks keeps the database bounded.
import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import worker from '../src/index';
import { RETENTION_BATCHES_PER_RUN, RETENTION_EMAIL_BATCH, RETENTION_ROW_BATCH } from '../src/retention';
import { call, newAccount } from './support/api';
import {
  accountRows,
  countedOf,
  DAY_MS,
  daysAgo,
  rowsOfEmail,
  seedEmail,
  seedHistory,
  subscribeToEmails,
} from './support/retention';

const scheduledRun = (bindings: Cloudflare.Env = env) => worker.scheduled(createScheduledController(), bindings);

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

async function newSubscribedAccount() {
  const { accountId } = await newAccount('Retention');
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
    await scheduledRun();
    for (const email of old) expect(await rowsOfEmail(email), email.id).toEqual(GONE);
    expect(await rowsOfEmail(recent)).toEqual(before);
  });

  it('never a QUEUED or SCHEDULED email of the same age, never a suppression', async () => {
    const accountId = await newSubscribedAccount();
    const queued = await seedEmail(accountId, 'QUEUED', daysAgo(40));
    // A delivery in progress, so the outbox sweep leaves it where it is.
    await env.DB.prepare('UPDATE emails SET lease_until = ?, lease_owner = ? WHERE id = ?')
      .bind(new Date(Date.now() + 3_600_000).toISOString(), 'retention-test', queued.id)
      .run();
    const scheduled = await seedEmail(accountId, 'SCHEDULED', daysAgo(40));
    const sent = await seedEmail(accountId, 'SENT', daysAgo(40));
    await env.DB.prepare(
      `INSERT INTO suppressions (account_id, email, reason, source, created_at) VALUES (?, 'gone@example.com', '550', 'bounce', ?)`,
    )
      .bind(accountId, daysAgo(400))
      .run();
    await scheduledRun();
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
    const suppressions = await env.DB.prepare('SELECT COUNT(*) AS n FROM suppressions WHERE account_id = ?')
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
    await scheduledRun({ ...env, RETENTION_DAYS: '0' });
    for (const email of [eightDays, sixDays, ancient])
      expect(await rowsOfEmail(email)).toMatchObject({ emails: 1, objects: 1 });
    expect(await accountRows(accountId)).toMatchObject({ otpHistory: 1, webhookDeliveries: 6 });
    await scheduledRun({ ...env, RETENTION_DAYS: '7' });
    expect(await rowsOfEmail(eightDays)).toEqual(GONE);
    expect(await rowsOfEmail(ancient)).toEqual(GONE);
    expect(await rowsOfEmail(sixDays)).toMatchObject({ emails: 1, objects: 1, webhookDeliveries: 2 });
  });
});

describe('retention: webhook deliveries, OTP history, idempotency records', () => {
  it('deletes settled deliveries and OTP history older than RETENTION_DAYS, idempotency records older than 24 h', async () => {
    const accountId = await newSubscribedAccount();
    await seedHistory(accountId, daysAgo(31));
    await seedHistory(accountId, daysAgo(2));
    await seedHistory(accountId, daysAgo(0.5));
    // An old delivery still pending (its next attempt due tomorrow) stays; settled ones go.
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, data, status, due_at, created_at, updated_at)
         SELECT 'msg_retention_' || value, (SELECT id FROM webhook_endpoints WHERE account_id = ?1), 'otp.verified', '{}',
           CASE value WHEN 0 THEN 'pending' WHEN 1 THEN 'delivered' ELSE 'failed' END,
           CASE value WHEN 0 THEN ?3 END, ?2, ?2
         FROM json_each('[0, 1, 2]')`,
      ).bind(accountId, Date.parse(daysAgo(31)), Date.parse(daysAgo(-1))),
      env.DB.prepare(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, data, status, created_at, updated_at)
         VALUES ('msg_retention_recent', (SELECT id FROM webhook_endpoints WHERE account_id = ?1), 'otp.verified', '{}',
           'delivered', ?2, ?2)`,
      ).bind(accountId, Date.parse(daysAgo(29))),
    ]);
    const counted = await countedOf(accountId);
    expect(counted).toBe(9); // each of the 3 sessions: sent, verified, and its time to verify
    await scheduledRun();
    expect(await accountRows(accountId)).toMatchObject({
      otpHistory: 2,
      otpOutcomes: 2,
      idempotencyRecords: 1,
      webhookDeliveries: 2,
    });
    // The metrics' counters outlive the facts they counted.
    expect(await countedOf(accountId)).toBe(counted);
    const left = await env.DB.prepare(
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
  const prefix = `em_bulk${crypto.randomUUID().slice(0, 8)}_`;
  await env.DB.batch([
    env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
       INSERT INTO emails (id, account_id, from_email, subject, status, created_at, updated_at)
       SELECT ?1 || i, ?2, 'a@example.com', 'Bulk', 'SENT', ?4, ?4 FROM n`,
    ).bind(prefix, accountId, count.emails, Date.parse(daysAgo(45))),
    env.DB.prepare(
      `INSERT INTO email_recipients (email_id, position, address, canonical, status)
       SELECT id, 0, 'bulk@example.com', 'bulk@example.com', 'SENT' FROM emails WHERE id LIKE ?1 || '%'`,
    ).bind(prefix),
    env.DB.prepare(
      `INSERT INTO email_events (email_id, seq, type, at)
       SELECT e.id, type.key + 1, type.value, e.created_at FROM emails AS e, json_each('["queued", "sent"]') AS type
       WHERE e.id LIKE ?1 || '%'`,
    ).bind(prefix),
    env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
       INSERT INTO otp_verifications (id, account_id, channel, session_id, email, sent_at, verified_at)
       SELECT 'ver_' || ?1 || i, ?2, 'backend', 'otp_' || ?1 || i, 'bulk@example.com', ?4, ?4 FROM n`,
    ).bind(prefix, accountId, count.history, Date.parse(daysAgo(45))),
  ]);
}

describe('retention: bounded batches', () => {
  it('a run deletes at most its bound, each transaction at most one batch; the next runs take the rest', async () => {
    const { accountId } = await newAccount('Retention bulk');
    const perRun = RETENTION_EMAIL_BATCH * RETENTION_BATCHES_PER_RUN;
    const historyPerRun = RETENTION_ROW_BATCH * RETENTION_BATCHES_PER_RUN;
    const total = perRun + RETENTION_EMAIL_BATCH / 2;
    const history = 2 * historyPerRun + RETENTION_ROW_BATCH / 2;
    await seedExpired(accountId, { emails: total, history });
    const batches: number[] = [];
    const db = new Proxy(env.DB, {
      get(target, property) {
        if (property !== 'batch') return Reflect.get(target, property).bind(target);
        return async (statements: D1PreparedStatement[]) => {
          const results = await target.batch(statements);
          // An email batch's transaction: its children, the emails, then how many emails it deleted.
          if (statements.length > 2) batches.push((results.at(-1)!.results[0] as { n: number }).n);
          return results;
        };
      },
    });
    const bindings = { ...env, DB: db };
    await scheduledRun(bindings);
    expect(batches).toEqual(Array(RETENTION_BATCHES_PER_RUN).fill(RETENTION_EMAIL_BATCH));
    expect(await accountRows(accountId)).toMatchObject({
      emails: total - perRun,
      recipients: total - perRun,
      otpHistory: history - historyPerRun,
    });
    await scheduledRun(bindings);
    expect(batches.at(-1)).toBe(RETENTION_EMAIL_BATCH / 2);
    expect(await accountRows(accountId)).toMatchObject({
      emails: 0,
      recipients: 0,
      otpHistory: history - 2 * historyPerRun,
    });
    await scheduledRun(bindings);
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
      for (let i = 0; i < emailsPerDay; i++) {
        const at = new Date(start + day * DAY_MS - (emailsPerDay - i) * 60_000).toISOString();
        await seedEmail(accountId, i % 6 === 0 ? 'FAILED' : 'SENT', at);
        if (i % 3 === 0) await seedHistory(accountId, at);
      }
      await scheduledRun(bindings);
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
      sizes.push((await env.DB.prepare('SELECT 1').run()).meta.size_after);
    }
    // Once retention has a full period to delete, freed pages are used again: the file stops growing.
    const steady = sizes.slice(3 * retentionDays);
    expect(Math.max(...steady)).toBeLessThanOrEqual(sizes[2 * retentionDays]! * 1.1);
  });
});
