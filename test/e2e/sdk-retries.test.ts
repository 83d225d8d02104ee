// Retries that cannot send twice, against the real service: a `fetch` option that drops the answer of an attempt the
// service acted on, or answers 503 itself. A send is retried under one Idempotency-Key and the service holds ONE
// email (the caller gets it); an OTP send is never repeated (one attempt, one code mailed, NETWORK_ERROR).
import { randomUUID } from 'node:crypto';
import { Postcode } from 'postcode';
import { createOtpClient } from 'postcode/browser';
import { beforeAll, describe, expect, it } from 'vitest';
import { uniqueEmail } from './browser';
import { type Account, faultyFetch, ownAccount, service, waitForMails } from './sdk-support';

let account: Account;
let pc: Postcode;

beforeAll(async () => {
  account = await ownAccount('sdk retries');
  pc = new Postcode(account.mailKey, { baseUrl: service.baseUrl });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The ids of this account's emails to `to` and of those with `tag` (name:value), every page. */
async function emailsBy(query: { to: string } | { tag: string }): Promise<string[]> {
  const ids: string[] = [];
  for await (const email of pc.emails.list(query)) ids.push(email.id);
  return ids;
}

describe('a send is retried under one Idempotency-Key, and the service holds one email', () => {
  it('emails.send: a dropped answer, then a 503; the third attempt gets the first outcome', async () => {
    const to = uniqueEmail('sdk-retry');
    const tag = { name: 'retry', value: randomUUID().slice(0, 8) };
    const { fetch, attempts } = faultyFetch(['lost-answer', 'server-error']);
    const faulty = new Postcode(account.mailKey, { baseUrl: service.baseUrl, fetch });
    const sent = await faulty.emails.send({ to, subject: 'Once', text: 'exactly once', tags: [tag] });

    expect(sent.error).toBeNull();
    expect(sent.data).toMatchObject({ id: expect.stringMatching(/^em_/), status: 'QUEUED' });
    expect(attempts.map((a) => `${a.method} ${a.path}`)).toEqual(Array(3).fill('POST /api/v1/emails'));
    const keys = attempts.map((a) => a.idempotencyKey);
    expect(keys[0]).toMatch(UUID);
    expect(keys).toEqual([keys[0], keys[0], keys[0]]);
    // The first attempt created the email; the last was answered with it again, not with another.
    expect(attempts[0]!.answer).toMatchObject({ success: true, data: { id: sent.data!.id } });
    expect(sent.headers?.get('Idempotent-Replayed')).toBe('true');

    expect(await emailsBy({ to })).toEqual([sent.data!.id]);
    expect(await emailsBy({ tag: `${tag.name}:${tag.value}` })).toEqual([sent.data!.id]);
    await expect.poll(async () => (await pc.emails.get(sent.data!.id)).data?.status, { timeout: 30_000 }).toBe('SENT');
    expect(await waitForMails(to, 1)).toBe(1);
  });

  it('emails.batch with its own idempotencyKey: a 503, then a dropped answer; two emails, not four', async () => {
    const tag = { name: 'retry', value: randomUUID().slice(0, 8) };
    const recipients = [uniqueEmail('sdk-retry-batch'), uniqueEmail('sdk-retry-batch')];
    const { fetch, attempts } = faultyFetch(['server-error', 'lost-answer']);
    const faulty = new Postcode(account.mailKey, { baseUrl: service.baseUrl, fetch });
    const key = `batch-${randomUUID()}`;
    const emails = recipients.map((to) => ({ to, subject: 'Batch once', text: 'x', tags: [tag] }));
    const sent = await faulty.emails.batch({ emails }, { idempotencyKey: key });

    expect(sent.error).toBeNull();
    expect(attempts.map((a) => a.idempotencyKey)).toEqual([key, key, key]);
    const ids = sent.data!.map((e) => e.id);
    expect(attempts[1]!.answer).toMatchObject({ data: ids.map((id) => ({ id })) });
    expect((await emailsBy({ tag: `${tag.name}:${tag.value}` })).sort()).toEqual([...ids].sort());
  });

  it('a read is retried after a 503 and a dropped answer', async () => {
    const { fetch, attempts } = faultyFetch(['server-error', 'lost-answer']);
    const read = await new Postcode(account.mailKey, { baseUrl: service.baseUrl, fetch }).emails.list({ limit: 1 });
    expect(read.error).toBeNull();
    expect(attempts.map((a) => `${a.method} ${a.path}`)).toEqual(Array(3).fill('GET /api/v1/emails'));
  });
});

describe('an OTP send is never repeated (a repeat could mail a second code)', () => {
  it('backend: a dropped answer is one attempt and NETWORK_ERROR; one code was mailed', async () => {
    const email = uniqueEmail('sdk-retry-otp');
    const { fetch, attempts } = faultyFetch(['lost-answer']);
    const faulty = new Postcode(account.serverKey, { baseUrl: service.baseUrl, fetch });
    const sent = await faulty.otp.backend.send({ email });

    expect(sent).toEqual({
      data: null,
      error: { code: 'NETWORK_ERROR', message: expect.any(String), status: null, requestId: null },
      headers: null,
    });
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ method: 'POST', path: '/api/v1/backend-otp/send', idempotencyKey: null });
    // The service did send: the code the caller never heard of is the only one mailed.
    expect(attempts[0]!.answer).toMatchObject({ success: true, data: { email, sent: true } });
    expect(await waitForMails(email, 1)).toBe(1);
  });

  it('a 503 is not retried either: email verification and the browser client answer it at once', async () => {
    const verification = faultyFetch(['server-error']);
    const faulty = new Postcode(account.serverKey, { baseUrl: service.baseUrl, fetch: verification.fetch });
    const refused = await faulty.otp.emailVerification.send({ email: uniqueEmail('sdk-retry-503') });
    expect(refused.error).toMatchObject({ status: 503 });
    expect(verification.attempts).toHaveLength(1);

    const email = uniqueEmail('sdk-retry-instant');
    const instant = faultyFetch(['lost-answer']);
    const browser = createOtpClient({ token: account.publicToken, baseUrl: service.baseUrl, fetch: instant.fetch });
    expect((await browser.send({ email })).error).toMatchObject({ code: 'NETWORK_ERROR' });
    expect(instant.attempts).toHaveLength(1);
    expect(await waitForMails(email, 1)).toBe(1);
  });
});
