// Rate limits (decisions.md "Rate limits"): the mail bucket per API key and per client IP, the read bucket
// per credential, the order of checks, and the RateCounter Durable Object that holds every counter.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  call,
  expectError,
  fetchWith,
  newAccount,
  sendLogTotal,
  uniqueAddress,
} from '../support/api';
import type { EmailList, SavedTemplate, TemplateList } from '../support/responses';

type RequestOptions = { token?: string; body?: unknown; rawBody?: BodyInit; headers?: Record<string, string> };

/** A client address no other test uses (counters are shared by the tests of this file). */
function uniqueIp(): string {
  const hex = crypto.randomUUID().replaceAll('-', '');
  return `2001:db8:${hex.slice(0, 4)}:${hex.slice(4, 8)}:${hex.slice(8, 12)}:${hex.slice(12, 16)}::1`;
}

const mailBody = (to = uniqueAddress('rate')) => ({ to, subject: 'Rate limit', text: 'hello' });

/** Runs `count` calls, at most `concurrency` at a time; results in call order. */
async function pooled<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

const INTEGER = /^\d+$/;

/** A whole number of seconds in [min, max], as a header value. */
function expectSecondsHeader(res: ApiResponse, name: string, min: number, max: number) {
  const value = res.headers.get(name);
  expect(value, `${name} header`).toMatch(INTEGER);
  const seconds = Number(value);
  expect(seconds, `${name}=${value}`).toBeGreaterThanOrEqual(min);
  expect(seconds, `${name}=${value}`).toBeLessThanOrEqual(max);
}

/** A 429 RATE_LIMITED with Retry-After (1-60 s, repeated in the body) and the RateLimit-* headers of the full bucket. */
function expectRateLimited(res: ApiResponse, limit: number) {
  expectError(res, 429, 'RATE_LIMITED');
  expectSecondsHeader(res, 'Retry-After', 1, 60);
  expect(res.json.error.retryAfterSeconds).toBe(Number(res.headers.get('Retry-After')));
  expect(res.headers.get('RateLimit-Limit')).toBe(String(limit));
  expect(res.headers.get('RateLimit-Remaining')).toBe('0');
  expectSecondsHeader(res, 'RateLimit-Reset', 0, 60);
}

function expectRateHeaders(res: ApiResponse, limit: number, remaining: number) {
  expect(res.headers.get('RateLimit-Limit')).toBe(String(limit));
  expect(res.headers.get('RateLimit-Remaining')).toBe(String(remaining));
  expectSecondsHeader(res, 'RateLimit-Reset', 0, 60);
}

describe('mail bucket per API key (default RATE_MAIL_PER_KEY = 120 / minute)', () => {
  it('120 sends with one key pass, the 121st is 429 with Retry-After; another key of the account is unaffected', async () => {
    const account = await newAccount();
    const to = uniqueAddress('bucket');
    const send = (token: string) => call('POST', '/api/v1/emails', { token, body: mailBody(to) });

    // The first two in sequence: Remaining counts down from 119.
    const first = await send(account.mailKey);
    expect(first.status).toBe(200);
    expectRateHeaders(first, 120, 119);
    const second = await send(account.mailKey);
    expect(second.status).toBe(200);
    expectRateHeaders(second, 120, 118);

    const rest = await pooled(118, 10, () => send(account.mailKey));
    const all = [first, second, ...rest];
    expect(all.map((r) => r.status)).toEqual(Array(120).fill(200));
    for (const res of all) {
      expect(res.headers.get('RateLimit-Limit')).toBe('120');
      expectSecondsHeader(res, 'RateLimit-Reset', 0, 60);
    }
    // Every accepted hit took one slot: each Remaining value from 119 down to 0 exactly once.
    const remaining = all.map((r) => Number(r.headers.get('RateLimit-Remaining'))).sort((a, b) => b - a);
    expect(remaining).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));

    const over = await send(account.mailKey);
    expectRateLimited(over, 120);

    // The bucket belongs to the key, not the account.
    const otherKey = await send(account.bothKey);
    expect(otherKey.status).toBe(200);
    expectRateHeaders(otherKey, 120, 119);

    // Still limited: the refused call did not free anything.
    expectRateLimited(await send(account.mailKey), 120);
  });
});

describe('mail bucket shared by routes 1, 3 and 4 (RATE_MAIL_PER_KEY = 3)', () => {
  const vars = { RATE_MAIL_PER_KEY: '3' };

  it('three calls spread over the three routes use the bucket up; a fourth on any of them → 429', async () => {
    const account = await newAccount();
    const template = await call<SavedTemplate>('POST', '/api/v1/templates', {
      token: account.mailKey,
      body: { name: 'rate', subject: 'Template {{n}}', textBody: 'Body {{n}}' },
    });
    expect(template.status).toBe(201);
    const templateId = template.json.data.id;
    const route1 = () => fetchWith(vars, 'POST', '/api/v1/emails', { token: account.mailKey, body: mailBody() });
    const route3 = () =>
      fetchWith(vars, 'POST', '/api/v1/templates/send', {
        token: account.mailKey,
        body: { to: uniqueAddress('rate'), templateId, vars: { n: 1 } },
      });
    const route4 = () =>
      fetchWith(vars, 'POST', '/api/v1/templates/send-test', {
        token: account.mailKey,
        body: { to: uniqueAddress('rate') },
      });

    const r1 = await route1();
    expect(r1.status).toBe(200);
    expectRateHeaders(r1, 3, 2);
    const r3 = await route3();
    expect(r3.status).toBe(200);
    expectRateHeaders(r3, 3, 1);
    const r4 = await route4();
    expect(r4.status).toBe(200);
    expectRateHeaders(r4, 3, 0);

    expectRateLimited(await route1(), 3);
    expectRateLimited(await route3(), 3);
    expectRateLimited(await route4(), 3);
    expect(await sendLogTotal(account.mailKey)).toBe(3);
  });
});

describe('mail bucket per client IP (CF-Connecting-IP, RATE_MAIL_PER_IP = 2)', () => {
  const vars = { RATE_MAIL_PER_IP: '2' };
  const send = (token: string, headers: Record<string, string>) =>
    fetchWith(vars, 'POST', '/api/v1/emails', { token, body: mailBody(), headers });

  it('counts every key from one address; another address passes; X-Forwarded-For changes nothing', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const ip = uniqueIp();
    const otherIp = uniqueIp();

    const first = await send(a.mailKey, { 'CF-Connecting-IP': ip });
    expect(first.status).toBe(200);
    const second = await send(b.mailKey, { 'CF-Connecting-IP': ip });
    expect(second.status).toBe(200);
    expectRateHeaders(second, 2, 0);

    // A third key (its own key bucket is empty) from the same address is refused by the IP bucket.
    expectRateLimited(await send(a.bothKey, { 'CF-Connecting-IP': ip }), 2);

    // The same key from another address passes: its key bucket (120) still has room.
    const elsewhere = await send(a.mailKey, { 'CF-Connecting-IP': otherIp });
    expect(elsewhere.status).toBe(200);
    expectRateHeaders(elsewhere, 2, 1);

    // Spoofed forwarding headers do not move the client to another address...
    for (const spoof of ['X-Forwarded-For', 'X-Real-IP', 'True-Client-IP']) {
      const res = await send(a.bothKey, { 'CF-Connecting-IP': ip, [spoof]: uniqueIp() });
      expectRateLimited(res, 2);
    }
    // ...nor charge the address they name: the exhausted one in X-Forwarded-For does not block otherIp.
    const spoofedExhausted = await send(b.mailKey, { 'CF-Connecting-IP': otherIp, 'X-Forwarded-For': ip });
    expect(spoofedExhausted.status).toBe(200);
    expectRateHeaders(spoofedExhausted, 2, 0);

    expect(await sendLogTotal(a.mailKey)).toBe(2);
    expect(await sendLogTotal(b.mailKey)).toBe(2);
  });
});

describe('read bucket per credential (RATE_READ_PER_CREDENTIAL = 3)', () => {
  const vars = { RATE_READ_PER_CREDENTIAL: '3' };
  const read = (token: string, path = '/api/v1/emails') =>
    fetchWith<EmailList | TemplateList>(vars, 'GET', path, { token });

  it('three reads pass, the fourth → 429; mail still goes out; another key reads normally', async () => {
    const account = await newAccount();
    for (let i = 0; i < 3; i++) {
      const res = await read(account.mailKey);
      expect(res.status).toBe(200);
      expectRateHeaders(res, 3, 2 - i);
    }
    expectRateLimited(await read(account.mailKey), 3);
    expectRateLimited(await read(account.mailKey, '/api/v1/templates'), 3);

    // The mail bucket is a separate one.
    const mail = await fetchWith(vars, 'POST', '/api/v1/emails', { token: account.mailKey, body: mailBody() });
    expect(mail.status).toBe(200);
    expect(mail.headers.get('RateLimit-Limit')).toBe('120');
    expectRateLimited(await read(account.mailKey), 3);

    // Another key of the same account has its own read bucket.
    const other = await read(account.bothKey);
    expect(other.status).toBe(200);
    expectRateHeaders(other, 3, 2);
    expect(other.json.data.total).toBe(1);
  });

  it('GET /api/v1/templates counts against the same read bucket as GET /api/v1/emails', async () => {
    const account = await newAccount();
    const steps = ['/api/v1/templates', '/api/v1/emails', '/api/v1/templates'];
    for (const [i, path] of steps.entries()) {
      const res = await read(account.mailKey, path);
      expect(res.status, path).toBe(200);
      expectRateHeaders(res, 3, 2 - i);
    }
    expectRateLimited(await read(account.mailKey, '/api/v1/emails'), 3);
  });
});

describe('order of checks: authentication → scope → rate limit → body validation', () => {
  it('with the IP and key buckets full: bad credentials → 401, wrong scope → 403, bad bodies → 429', async () => {
    const vars = { RATE_MAIL_PER_KEY: '1', RATE_MAIL_PER_IP: '1' };
    const account = await newAccount();
    const ip = uniqueIp();
    const post = (options: RequestOptions) =>
      fetchWith(vars, 'POST', '/api/v1/emails', {
        ...options,
        headers: { 'CF-Connecting-IP': ip, ...options.headers },
      });

    expect((await post({ token: account.mailKey, body: mailBody() })).status).toBe(200);
    expectRateLimited(await post({ token: account.mailKey, body: mailBody() }), 1);

    expectError(await post({ body: mailBody() }), 401, 'UNAUTHORIZED');
    expectError(await post({ token: `pc_key_${'x'.repeat(32)}`, body: mailBody() }), 401, 'UNAUTHORIZED');
    expectError(await post({ token: account.revokedKey, body: mailBody() }), 401, 'UNAUTHORIZED');
    expectError(await post({ token: account.serverKey, body: mailBody() }), 403, 'SCOPE_REQUIRED');

    // A valid key with a full bucket: the rate limit answers before the body is looked at.
    const badBodies: RequestOptions[] = [
      { body: {} },
      { body: { to: 'not-an-address', subject: 's', text: 't' } },
      { rawBody: '{"to": ', headers: { 'Content-Type': 'application/json' } },
      { rawBody: JSON.stringify(mailBody()), headers: { 'Content-Type': 'text/plain' } },
      {
        rawBody: JSON.stringify({ ...mailBody(), text: 'x'.repeat(600 * 1024) }),
        headers: { 'Content-Type': 'application/json' },
      },
    ];
    for (const options of badBodies) expectRateLimited(await post({ token: account.mailKey, ...options }), 1);
    // Another key from the full address: refused by the IP bucket, again before validation.
    expectRateLimited(await post({ token: account.bothKey, body: {} }), 1);

    // Control: the same invalid body from a fresh address and key is a 400.
    const fresh = await fetchWith(vars, 'POST', '/api/v1/emails', {
      token: (await newAccount()).mailKey,
      body: {},
      headers: { 'CF-Connecting-IP': uniqueIp() },
    });
    expectError(fresh, 400, 'INVALID_INPUT');
    expect(await sendLogTotal(account.mailKey)).toBe(1);
  });

  it('a read with a full bucket and an invalid query → 429, not 400', async () => {
    const vars = { RATE_READ_PER_CREDENTIAL: '1' };
    const { mailKey } = await newAccount();
    expect((await fetchWith(vars, 'GET', '/api/v1/emails', { token: mailKey })).status).toBe(200);
    expectRateLimited(await fetchWith(vars, 'GET', '/api/v1/emails?limit=abc', { token: mailKey }), 1);
    expectError(
      await fetchWith(vars, 'GET', '/api/v1/emails', { token: 'pc_key_unknownunknownunknown' }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('RateCounter Durable Object', () => {
  const counter = () => env.RATE_COUNTER.get(env.RATE_COUNTER.idFromName(`test:${crypto.randomUUID()}`));
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Hits written to the object's SQLite (0 when the table was never created). */
  const loggedHits = (stub: ReturnType<typeof counter>) =>
    runInDurableObject(stub, (_instance, state) => {
      const table = state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'log_hits'").toArray();
      return table.length === 0
        ? 0
        : state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM log_hits').one().n;
    });

  it('50 concurrent hits with limit 10 → exactly 10 allowed; refused hits are not counted', async () => {
    const stub = counter();
    const decisions = await Promise.all(Array.from({ length: 50 }, () => stub.hit(10, 60)));
    const allowed = decisions.filter((d) => d.allowed);
    const refused = decisions.filter((d) => !d.allowed);
    expect(allowed).toHaveLength(10);
    expect(allowed.map((d) => d.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const d of refused) {
      expect(d).toMatchObject({ allowed: false, limit: 10, remaining: 0 });
      expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(d.resetSeconds).toBeLessThanOrEqual(60);
    }

    const more = await Promise.all(Array.from({ length: 20 }, () => stub.hit(10, 60)));
    expect(more.filter((d) => d.allowed)).toHaveLength(0);
    expect(more.every((d) => d.remaining === 0)).toBe(true);
    expect(await stub.peek(10, 60)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('long windows (the OTP limits) are written to SQLite and survive an eviction; short ones stay in memory', async () => {
    const stub = counter();
    for (let i = 0; i < 3; i++) expect((await stub.hit(5, 600)).allowed).toBe(true);
    expect(await loggedHits(stub)).toBe(3);
    await evictDurableObject(stub);
    expect(await stub.peek(5, 600)).toMatchObject({ allowed: true, remaining: 2 });
    expect(await stub.hit(5, 600)).toMatchObject({ allowed: true, remaining: 1 });

    const short = counter();
    for (let i = 0; i < 3; i++) expect((await short.hit(5, 60)).allowed).toBe(true);
    expect(await loggedHits(short)).toBe(0);
  });

  it('logs in one object are counted apart, and each survives an eviction', async () => {
    const stub = counter();
    for (let i = 0; i < 2; i++) expect((await stub.hit(2, 600, 'sends')).allowed).toBe(true);
    expect(await stub.hit(2, 600, 'sends')).toMatchObject({ allowed: false, remaining: 0 });
    expect(await stub.peek(3, 3600, 'fails')).toMatchObject({ allowed: true, remaining: 3 });
    expect(await stub.hit(3, 3600, 'fails')).toMatchObject({ allowed: true, remaining: 2 });
    expect(await loggedHits(stub)).toBe(3);
    await evictDurableObject(stub);
    expect(await stub.peek(2, 600, 'sends')).toMatchObject({ allowed: false, remaining: 0 });
    expect(await stub.peek(3, 3600, 'fails')).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('the alarm reloads persisted logs only: a memory-only log in the same object keeps its count', async () => {
    const stub = counter();
    expect((await stub.hit(5, 3600, 'long')).allowed).toBe(true);
    for (let i = 0; i < 2; i++) expect((await stub.hit(2, 60, 'short')).allowed).toBe(true);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.peek(2, 60, 'short')).toMatchObject({ allowed: false, remaining: 0 });
    expect(await stub.peek(5, 3600, 'long')).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('refused hits do not keep the window full once the counted hits have left it', async () => {
    const stub = counter();
    const start = Date.now();
    // A 4-second window leaves a loaded machine 3 s of slack between the counted hits and the refused ones.
    const counted = await Promise.all(Array.from({ length: 3 }, () => stub.hit(3, 4)));
    const countedBy = Date.now();
    expect(counted.every((d) => d.allowed)).toBe(true);
    await sleep(1000);
    // Refused one second in: had they been counted, they would block until about 5 s.
    const refused = await Promise.all(Array.from({ length: 10 }, () => stub.hit(3, 4)));
    expect(Date.now() - start).toBeLessThan(4000); // still inside the counted hits' window
    expect(refused.some((d) => d.allowed)).toBe(false);
    await sleep(Math.max(countedBy + 4300 - Date.now(), 0));
    const again = await Promise.all(Array.from({ length: 5 }, () => stub.hit(3, 4)));
    expect(again.filter((d) => d.allowed)).toHaveLength(3);
  });

  it('with a 1-second window, hits are allowed again after the window has passed', async () => {
    const stub = counter();
    const first = await Promise.all(Array.from({ length: 6 }, () => stub.hit(5, 1)));
    expect(first.filter((d) => d.allowed)).toHaveLength(5);
    await sleep(1100);
    const next = await stub.hit(5, 1);
    expect(next).toMatchObject({ allowed: true, limit: 5, remaining: 4 });
    const rest = await Promise.all(Array.from({ length: 5 }, () => stub.hit(5, 1)));
    expect(rest.filter((d) => d.allowed)).toHaveLength(4);
  });

  it('the alarm forgets persisted hits older than any window and keeps the recent ones', async () => {
    const stub = counter();
    expect((await stub.hit(5, 3600)).allowed).toBe(true);
    await runInDurableObject(stub, (_instance, state) => {
      for (let i = 0; i < 3; i++) {
        state.storage.sql.exec("INSERT INTO log_hits (log, at) VALUES ('hits', ?)", Date.now() - 2 * 3600_000);
      }
    });
    expect(await loggedHits(stub)).toBe(4);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await loggedHits(stub)).toBe(1);
    expect(await stub.hit(5, 3600)).toMatchObject({ allowed: true, limit: 5, remaining: 3 });
  });
});
