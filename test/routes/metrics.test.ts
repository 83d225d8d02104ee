// GET /api/v1/metrics: what an account sent and how its codes converted, from counters the triggers keep with
// the facts (migrations/0006_metrics.sql).
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { BOUNCE_REASONS, SENDER_PROBLEM_REASONS } from '../../src/mail/bounce-reasons';
import { returnPathAddress } from '../../src/mail/return-path';
import { hourCounts } from '../../src/store/account/metrics';
import type { AccountSql } from '../../src/store/account/object-sql';
import { admin, call, expectError, fetchWith, newAccount, uniqueAddress, waitForStatus } from '../support/api';
import { bounce, runBatch, storedEmail } from '../support/delivery';
import { TURNSTILE_TEST_SECRETS, TURNSTILE_TEST_SITE_KEY } from '../support/node/turnstile-stub';
import { clearExpiredSession, sendAndRead, sessionStub, wrongCode } from '../support/otp';
import { inboundMessage, postfixBounce } from '../support/reports';
import type { OtpToken } from '../support/responses';

type Metrics = {
  from: string;
  to: string;
  granularity: string;
  emails: {
    totals: Record<string, number>;
    rates: Record<string, number | null>;
    series: ({ start: string } & Record<string, number>)[];
  };
  otp: Record<string, Record<string, unknown>>;
};

const metricsOf = async (key: string, query = '') => {
  const res = await call<Metrics>('GET', `/api/v1/metrics${query}`, { token: key });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.data;
};

const NO_REFUSALS = { challenge_failed: 0, recipient_capped: 0, domain_capped: 0, address_not_allowed: 0 };

const dayStart = (at = new Date()) => new Date(Math.floor(at.getTime() / 86_400_000) * 86_400_000).toISOString();

describe('GET /api/v1/metrics', () => {
  it('counts recipients queued and sent per day, with the rates', async () => {
    const account = await newAccount('metrics');
    for (const to of [[uniqueAddress('m1')], [uniqueAddress('m2'), uniqueAddress('m3')]]) {
      const res = await call<{ id: string }>('POST', '/api/v1/emails', {
        token: account.mailKey,
        body: { to, subject: 'Metrics', text: 'hi' },
      });
      expect(res.status).toBe(200);
      await waitForStatus(account.mailKey, res.json.data.id, 'SENT');
    }
    const metrics = await metricsOf(account.mailKey);
    expect(metrics.granularity).toBe('day');
    expect(metrics.emails.totals).toEqual({
      queued: 3,
      sent: 3,
      delivered: 0,
      bounced: 0,
      bouncedSenderProblem: 0,
      complained: 0,
      failed: 0,
      suppressed: 0,
    });
    expect(metrics.emails.rates).toEqual({ delivered: 0, bounced: 0, complained: 0 });
    expect(metrics.emails.series).toHaveLength(8); // 7 days back from now, in whole UTC days
    expect(metrics.emails.series.at(-1)).toMatchObject({ start: dayStart(), queued: 3, sent: 3 });
    expect(metrics.emails.series[0]).toMatchObject({ queued: 0, sent: 0 });
    const hourly = await metricsOf(account.mailKey, '?granularity=hour');
    expect(hourly.emails.series).toHaveLength(25);
    expect(hourly.emails.totals.sent).toBe(3);
  });

  it('a bounce after the relay and a refused recipient count once each; a repeated report adds nothing', async () => {
    const account = await newAccount('metrics bounce');
    const to = uniqueAddress('bounced');
    const id = await storedEmail(account.accountId, [to, uniqueAddress('reject550')]);
    await runBatch([id]);
    const returnPath = await returnPathAddress(env.DKIM_KEY_SECRET, id, 'pc-bounces.example.com');
    for (let i = 0; i < 2; i++) {
      const { message } = inboundMessage(postfixBounce({ to: returnPath, recipient: to }));
      await worker.email(message, env);
    }
    const { totals, rates } = (await metricsOf(account.mailKey)).emails;
    expect(totals).toMatchObject({ queued: 2, sent: 1, bounced: 1, failed: 1 });
    expect(rates.bounced).toBe(1);
  });

  it("bouncedSenderProblem: the bounces whose reason is the sender's (a block, spam, auth, policy), once each", async () => {
    const account = await newAccount('metrics sender problem');
    const to = BOUNCE_REASONS.map((reason) => uniqueAddress(reason.replaceAll('_', '-')));
    const id = await storedEmail(account.accountId, to);
    await runBatch([id]);
    const senderProblems: string[] = [];
    for (const [i, reason] of BOUNCE_REASONS.entries()) {
      expect(await bounce(id, to[i]!, reason)).toBe('applied');
      const { totals } = (await metricsOf(account.mailKey)).emails;
      if (totals.bouncedSenderProblem! > senderProblems.length) senderProblems.push(reason);
      expect(totals.bounced, reason).toBe(i + 1);
    }
    // The trigger's list is the vocabulary's, in the vocabulary's order here.
    expect(senderProblems).toEqual(BOUNCE_REASONS.filter((reason) => SENDER_PROBLEM_REASONS.includes(reason)));
    expect(senderProblems).toContain('blocked');
    // A blocked recipient that bounces hard later stays counted once; a repeated block adds nothing.
    const blocked = to[BOUNCE_REASONS.indexOf('blocked')]!;
    expect(await bounce(id, blocked, 'user_unknown')).toBe('applied');
    expect(await bounce(id, blocked, 'blocked')).toBe('ignored');
    const metrics = await metricsOf(account.mailKey);
    expect(metrics.emails.totals).toMatchObject({
      sent: BOUNCE_REASONS.length,
      bounced: BOUNCE_REASONS.length,
      bouncedSenderProblem: 4,
    });
    expect(metrics.emails.series.at(-1)).toMatchObject({ start: dayStart(), bouncedSenderProblem: 4 });
  });

  it('a test key sees its own mode only', async () => {
    const account = await newAccount('metrics modes');
    const test = await call<{ key: string }>('POST', `/admin/v1/accounts/${account.accountId}/api-keys`, {
      token: 'test-admin-token',
      body: { scopes: ['mail_api'], mode: 'test' },
    });
    const res = await call<{ id: string }>('POST', '/api/v1/emails', {
      token: test.json.data.key,
      body: { to: uniqueAddress('test'), subject: 'Test mode', text: 'hi' },
    });
    await waitForStatus(test.json.data.key, res.json.data.id, 'SENT');
    expect((await metricsOf(test.json.data.key)).emails.totals.sent).toBe(1);
    expect((await metricsOf(account.mailKey)).emails.totals.sent).toBe(0);
  });

  it('the OTP funnel per flavour: verified (with its time), locked, and expired once its object clears it', async () => {
    const account = await newAccount('metrics otp');
    const verified = await sendAndRead('/api/v1/backend-otp/send', account.serverKey, uniqueAddress('v'));
    const ok = await call('POST', '/api/v1/backend-otp/verify', {
      token: account.serverKey,
      body: { sessionId: verified.sessionId, email: verified.res.json.data.email, code: verified.code },
    });
    expect(ok.status).toBe(200);
    const locked = await sendAndRead('/api/v1/backend-otp/send', account.serverKey, uniqueAddress('l'));
    for (let i = 0; i < 5; i++) {
      await call('POST', '/api/v1/backend-otp/verify', {
        token: account.serverKey,
        body: { sessionId: locked.sessionId, email: locked.res.json.data.email, code: wrongCode(locked.code) },
      });
    }
    const expired = await sendAndRead('/api/v1/backend-otp/send', account.serverKey, uniqueAddress('e'));
    // The session expired more than a day ago: its object's alarm records how it ended, then clears it.
    await clearExpiredSession(expired.sessionId);
    const stub = sessionStub(expired.sessionId);
    await expect
      .poll(async () => (await metricsOf(account.serverKey)).otp.backend, { timeout: 5000 })
      .toEqual({
        sent: 3,
        verified: 1,
        locked: 1,
        expired: 1,
        conversionRate: 0.3333,
        medianSecondsToVerify: 10,
        refused: NO_REFUSALS,
      });
    const left = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec('SELECT COUNT(*) AS n FROM otp_sessions WHERE id = ?', expired.sessionId).one(),
    );
    expect(left.n).toBe(0);
    expect((await metricsOf(account.serverKey)).otp.instant).toMatchObject({ sent: 0, conversionRate: null });
  });

  it('refused sends per flavour and reason (bot check, address, domain, recipient), in the hour they were refused', async () => {
    const account = await newAccount('metrics refusals');
    const created = await admin<OtpToken>('POST', `/admin/v1/accounts/${account.accountId}/otp-tokens`, {
      turnstile: { siteKey: TURNSTILE_TEST_SITE_KEY, secret: TURNSTILE_TEST_SECRETS.passes },
      policy: { blockSubaddresses: true, domainSendsPerHour: 1 },
    });
    const { token } = created.json.data;
    const send = (email: string, turnstileToken?: string) =>
      call('POST', '/api/v1/instant-otp/send', { token, body: { email, turnstileToken } });
    const domain = `${crypto.randomUUID().slice(0, 8)}.example.net`;
    expectError(await send(`a@${domain}`), 403, 'CHALLENGE_FAILED');
    expectError(await send(`a+x@${domain}`, 'answer'), 403, 'ADDRESS_NOT_ALLOWED');
    expect((await send(`a@${domain}`, 'answer')).status).toBe(200);
    expectError(await send(`b@${domain}`, 'answer'), 429, 'OTP_RATE_LIMITED');
    // The recipient's limits, with the server key (no policy, no check) on the instant and backend routes.
    const oneEach = { RATE_OTP_SEND_PER_RECIPIENT: '1' };
    for (const path of ['/api/v1/instant-otp/send', '/api/v1/backend-otp/send']) {
      const other = uniqueAddress('refused');
      expect(
        (await fetchWith(oneEach, 'POST', path, { token: account.serverKey, body: { email: other } })).status,
      ).toBe(200);
      const capped = await fetchWith(oneEach, 'POST', path, { token: account.serverKey, body: { email: other } });
      expect(capped.status).toBe(429);
    }
    await expect
      .poll(async () => (await metricsOf(account.serverKey)).otp, { timeout: 5000 })
      .toMatchObject({
        instant: {
          sent: 0,
          refused: { challenge_failed: 1, address_not_allowed: 1, domain_capped: 1, recipient_capped: 1 },
        },
        backend: { sent: 0, refused: { ...NO_REFUSALS, recipient_capped: 1 } },
        email_verification: { refused: NO_REFUSALS },
      });
  });

  it('reads the same number of rows for one email as for a thousand (the counters, not the emails)', async () => {
    const reads: { rowsRead: number; counters: number }[] = [];
    let rowsRead = 0;
    for (const count of [1, 1000]) {
      const account = await newAccount(`metrics ${count}`);
      const ids = await Promise.all(
        Array.from({ length: Math.min(count, 50) }, () =>
          storedEmail(
            account.accountId,
            Array.from({ length: count === 1 ? 1 : 20 }, () => uniqueAddress('bulk')),
          ),
        ),
      );
      expect(ids.length * (count === 1 ? 1 : 20)).toBe(count);
      const now = Date.now();
      // hourCounts inside the account's object, over its SQLite with each statement's rows read recorded.
      const store = env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(account.accountId));
      const counts = await runInDurableObject(store, (_instance, state) => {
        const counting = {
          plane: 'account',
          prepare: (sql: string) => ({
            bind: (...values: SqlStorageValue[]) => ({
              all: async <T>() => {
                const cursor = state.storage.sql.exec(sql, ...values);
                const results = cursor.toArray() as T[];
                rowsRead = cursor.rowsRead;
                return { results, meta: { changes: 0, last_row_id: 0 } };
              },
            }),
          }),
        } as unknown as AccountSql;
        return hourCounts(counting, account.accountId, false, now - 7 * 86_400_000, now + 3600_000);
      });
      expect(counts.reduce((sum, c) => sum + c.n, 0)).toBe(count);
      reads.push({ rowsRead, counters: counts.length });
    }
    // One counter row either way (queued, this hour); SQLite reads it and at most the index entry past the range.
    expect(reads.map((r) => r.counters)).toEqual([1, 1]);
    for (const read of reads) expect(read.rowsRead).toBeLessThanOrEqual(read.counters + 1);
  });

  it('400 for a period that is empty, too long, or not a time, and for another granularity', async () => {
    const account = await newAccount('metrics errors');
    const cases = [
      '?from=2026-11-20T00:00:00Z&to=2026-11-19T00:00:00Z',
      '?from=2026-01-01T00:00:00Z&to=2026-11-19T00:00:00Z',
      '?granularity=hour&from=2026-11-01T00:00:00Z&to=2026-11-19T00:00:00Z',
      '?from=yesterday',
      '?granularity=week',
      '?since=2026-11-01T00:00:00Z',
    ];
    for (const query of cases) {
      const res = await call('GET', `/api/v1/metrics${query}`, { token: account.mailKey });
      expectError(res, 400, 'INVALID_INPUT');
    }
  });
});
