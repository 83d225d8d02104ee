// The SDK's client (sdk/src) against the Worker in the Workers runtime: every call resolves to { data, error,
// headers }; lists iterate over their cursor; a send keeps one Idempotency-Key across retries, so a lost answer or a
// 5xx never sends twice; a 429 is waited out when short and returned when long; an OTP send is never repeated.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type ErrorCode, Postcode } from '../../sdk/src/index';
import { newAccount, uniqueAddress, waitForInbox } from '../support/api';
import { BASE_URL, faultyFetch, workerFetch } from './support';

const client = (key: string, fetch: typeof globalThis.fetch = workerFetch) =>
  new Postcode(key, { baseUrl: BASE_URL, fetch });

describe('Postcode', () => {
  it('sends, reads and lists emails; the answer carries data and headers, never an exception', async () => {
    const { mailKey } = await newAccount('sdk');
    const pc = client(mailKey);
    const to = uniqueAddress('sdk');
    const sent = await pc.emails.send({ to, subject: 'From the SDK', text: 'hi' });
    expect(sent.error).toBeNull();
    expect(sent.data).toMatchObject({ id: expect.stringMatching(/^em_/), status: 'QUEUED' });
    expect(sent.headers?.get('X-Request-Id')).toMatch(/^req_/);
    const detail = await pc.emails.get(sent.data!.id);
    expect(detail.data).toMatchObject({ id: sent.data!.id, subject: 'From the SDK' });
    expect(await waitForInbox(to, 1)).toHaveLength(1);
  });

  it('for await walks every page of a list through nextCursor', async () => {
    const { mailKey } = await newAccount('sdk pages');
    const pc = client(mailKey);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { data } = await pc.templates.create({ name: `t${i}`, subject: 'S', textBody: 'T' });
      ids.push(data!.id);
    }
    const first = await pc.templates.list({ limit: 2 });
    expect(first.data?.items).toHaveLength(2);
    expect(first.data?.nextCursor).toEqual(expect.any(String));
    const seen: string[] = [];
    for await (const template of pc.templates.list({ limit: 2 })) seen.push(template.id);
    expect(seen.sort()).toEqual(ids.sort());
  });

  it("an API error is a value: its typed code, message, status and request id; the input's details", async () => {
    const { mailKey } = await newAccount('sdk errors');
    const unknown = await client('pc_key_doesnotexist').emails.list();
    expect(unknown.data).toBeNull();
    expect(unknown.error).toMatchObject({
      code: 'UNAUTHORIZED',
      status: 401,
      requestId: expect.stringMatching(/^req_/),
    });
    const invalid = await client(mailKey).emails.send({ to: 'not an address', subject: 'x', text: 'y' });
    expect(invalid.error).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    expect(invalid.error?.message).toMatch(/^to/);
    expectTypeOf<'UNAUTHORIZED'>().toExtend<ErrorCode>();
    expectTypeOf<'OTP_RATE_LIMITED'>().toExtend<ErrorCode>();
    expectTypeOf<'NOT_A_CODE'>().not.toExtend<ErrorCode>();
  });

  it('refuses to start without a key or a baseUrl', () => {
    expect(() => new Postcode('', { baseUrl: BASE_URL })).toThrow(/key/);
    expect(() => new Postcode('pc_key_x', { baseUrl: '' })).toThrow(/baseUrl/);
  });
});

describe('retries that cannot send twice', () => {
  it('a lost answer, then a 503: the send is retried with one Idempotency-Key and queued once', async () => {
    const { mailKey } = await newAccount('sdk retries');
    const { fetch, calls } = faultyFetch(['lost-answer', 'server-error']);
    const to = uniqueAddress('sdk-retry');
    const sent = await client(mailKey, fetch).emails.send({ to, subject: 'Once', text: 'once' });
    expect(sent.error).toBeNull();
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.idempotencyKey)).size).toBe(1);
    expect(calls[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    const log = await client(mailKey).emails.list({ to });
    expect(log.data?.emails.map((e) => e.id)).toEqual([sent.data!.id]);
    expect(await waitForInbox(to, 1)).toHaveLength(1);
  });

  it('an idempotencyKey given is the one sent, and a later send with it replays the first answer', async () => {
    const { mailKey } = await newAccount('sdk key');
    const { fetch, calls } = faultyFetch(['server-error']);
    const key = `order-${crypto.randomUUID()}`;
    const email = { to: uniqueAddress('sdk-key'), subject: 'K', text: 'k' };
    const first = await client(mailKey, fetch).emails.send(email, { idempotencyKey: key });
    expect(calls.map((c) => c.idempotencyKey)).toEqual([key, key]);
    const again = await client(mailKey).emails.send(email, { idempotencyKey: key });
    expect(again.data?.id).toBe(first.data!.id);
    expect(await waitForInbox(email.to, 1)).toHaveLength(1);
  });

  it('a short 429 is waited out (Retry-After), a long one comes back with retryAfterSeconds', async () => {
    const { mailKey } = await newAccount('sdk 429');
    const short = faultyFetch([{ retryAfter: 1 }]);
    const started = Date.now();
    const ok = await client(mailKey, short.fetch).emails.list();
    expect(ok.error).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const long = faultyFetch([{ retryAfter: 120 }]);
    const refused = await client(mailKey, long.fetch).emails.list();
    expect(refused.error).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 120 });
    expect(long.calls).toHaveLength(1);
  });

  it('reads are retried after a 5xx; an OTP send whose answer was lost is not repeated (one code mailed)', async () => {
    const { mailKey, serverKey } = await newAccount('sdk otp');
    const read = faultyFetch(['server-error', 'server-error']);
    expect((await client(mailKey, read.fetch).emails.list()).error).toBeNull();
    expect(read.calls).toHaveLength(3);
    const email = uniqueAddress('sdk-otp');
    const otp = faultyFetch(['lost-answer']);
    const sent = await client(serverKey, otp.fetch).otp.backend.send({ email });
    expect(sent.error).toMatchObject({ code: 'NETWORK_ERROR', status: null });
    expect(otp.calls).toHaveLength(1);
    expect(otp.calls[0]!.idempotencyKey).toBeNull();
    expect(await waitForInbox(email, 1)).toHaveLength(1);
  });
});
