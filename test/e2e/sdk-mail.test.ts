// The SDK as published (`postcode`, sdk/dist) against the service as `npm start` runs it, every mail resource at
// least once: emails (send, batch, get, the list's pages, a scheduled email moved and cancelled), templates, domains,
// senders, suppressions and metrics, in an account of the file's own. Every call answers { data, error, headers };
// a refused one its typed code, status and request id, never an exception.
import { randomUUID } from 'node:crypto';
import { type ErrorCode, Postcode, type PostcodeError } from 'postcode';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { uniqueEmail } from './browser';
import { type Account, mailsTo, ownAccount, service, waitForMails } from './sdk-support';
import { publishRecords } from './shared-service';

let account: Account;
let pc: Postcode;

beforeAll(async () => {
  account = await ownAccount('sdk mail resources');
  pc = new Postcode(account.mailKey, { baseUrl: service.baseUrl });
});

const inAnHour = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();

async function statusOf(emailId: string) {
  const { data, error } = await pc.emails.get(emailId);
  if (error) throw new Error(`${error.code}: ${error.message}`);
  return data.status;
}

describe('emails', () => {
  it('send and batch answer the queued emails; get follows one to SENT; the inbox has it', async () => {
    const to = uniqueEmail('sdk-send');
    const sent = await pc.emails.send({ to, subject: 'SDK single', text: 'one' });
    expect(sent).toMatchObject({ error: null, data: { id: expect.stringMatching(/^em_/), status: 'QUEUED' } });
    expect(sent.headers).toBeInstanceOf(Headers);
    expect(sent.headers?.get('X-Request-Id')).toMatch(/^req_/);
    const id = sent.data!.id;

    const others = [uniqueEmail('sdk-batch'), uniqueEmail('sdk-batch')];
    const batch = await pc.emails.batch({
      emails: others.map((address) => ({ to: address, subject: 'B', text: 'b' })),
    });
    expect(batch.error).toBeNull();
    expect(batch.data).toEqual([
      { id: expect.stringMatching(/^em_/), status: 'QUEUED' },
      { id: expect.stringMatching(/^em_/), status: 'QUEUED' },
    ]);

    await expect.poll(() => statusOf(id), { timeout: 30_000 }).toBe('SENT');
    const detail = await pc.emails.get(id);
    expect(detail.data).toMatchObject({ id, subject: 'SDK single', to: [to], text: 'one' });
    expect(await waitForMails(to, 1)).toBe(1);
    for (const address of others) expect(await waitForMails(address, 1)).toBe(1);
  });

  it('a list is awaited for its first page, and `for await` follows nextCursor over every page', async () => {
    const tag = { name: 'run', value: randomUUID().slice(0, 8) };
    const ids: string[] = [];
    for (const text of ['1', '2', '3']) {
      const { data } = await pc.emails.send({ to: uniqueEmail('sdk-pages'), subject: 'Paged', text, tags: [tag] });
      ids.push(data!.id);
    }
    // The `after` of each request the list makes ('' for the first page): shows the pages really were fetched.
    const afters: string[] = [];
    const paging = new Postcode(account.mailKey, {
      baseUrl: service.baseUrl,
      fetch: (input, init) => {
        afters.push(new URL(String(input)).searchParams.get('after') ?? '');
        return fetch(input, init);
      },
    });
    const query = { tag: `${tag.name}:${tag.value}`, limit: 1 };

    const first = await paging.emails.list(query);
    expect(first.error).toBeNull();
    expect(first.data?.emails).toHaveLength(1);
    expect(first.data?.total).toBe(3);
    expect(first.data?.nextCursor).toEqual(expect.any(String));

    afters.length = 0;
    const seen: string[] = [];
    for await (const email of paging.emails.list(query)) seen.push(email.id);
    expect(seen.sort()).toEqual([...ids].sort());
    expect(afters[0]).toBe('');
    const cursors = afters.slice(1);
    expect(cursors.length, 'one request per page after the first').toBeGreaterThanOrEqual(2);
    expect(new Set(cursors).size).toBe(cursors.length);
    expect(cursors.every((cursor) => cursor !== '')).toBe(true);
  });

  it('a scheduled email is rescheduled, then cancelled; a second cancel is EMAIL_NOT_CANCELABLE', async () => {
    const to = uniqueEmail('sdk-scheduled');
    const scheduled = await pc.emails.send({ to, subject: 'Later', text: 'later', scheduledAt: inAnHour(1) });
    expect(scheduled.data).toMatchObject({ status: 'SCHEDULED' });
    const id = scheduled.data!.id;

    const later = inAnHour(2);
    const moved = await pc.emails.reschedule(id, { scheduledAt: later });
    expect(moved).toMatchObject({ error: null, data: { id, status: 'SCHEDULED', scheduledAt: later } });

    const canceled = await pc.emails.cancel(id);
    expect(canceled).toMatchObject({ error: null, data: { id, status: 'CANCELED' } });
    expect((await pc.emails.get(id)).data).toMatchObject({
      status: 'CANCELED',
      scheduledAt: later,
      recipients: [{ email: to, status: 'CANCELED' }],
    });
    const again = await pc.emails.cancel(id);
    expect(again.data).toBeNull();
    expect(again.error).toMatchObject({ code: 'EMAIL_NOT_CANCELABLE', status: 409 });
    expect(await mailsTo(to)).toEqual([]);
  });

  it('a refused call is a value: its typed code, message, status and the answer’s request id', async () => {
    const missing = await pc.emails.get('em_doesnotexist0000000000');
    expect(missing.data).toBeNull();
    expect(missing.error).toEqual({
      code: 'EMAIL_NOT_FOUND',
      message: expect.any(String),
      status: 404,
      requestId: expect.stringMatching(/^req_/),
    });
    expect(missing.error?.requestId).toBe(missing.headers?.get('X-Request-Id'));
    expectTypeOf(missing.error!.code).toEqualTypeOf<PostcodeError['code']>();
    expectTypeOf<'EMAIL_NOT_FOUND'>().toExtend<ErrorCode>();
    expectTypeOf<'NO_SUCH_CODE'>().not.toExtend<ErrorCode>();

    expect((await pc.emails.get('x')).error).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    const invalid = await pc.emails.send({ to: 'not an address', subject: 'x', text: 'y' });
    expect(invalid.error).toMatchObject({ code: 'INVALID_INPUT', status: 400, message: expect.stringMatching(/^to/) });
    const stranger = new Postcode(`pc_key_${'x'.repeat(32)}`, { baseUrl: service.baseUrl });
    expect((await stranger.emails.list()).error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    const otpKey = new Postcode(account.serverKey, { baseUrl: service.baseUrl });
    expect((await otpKey.emails.list()).error).toMatchObject({ code: 'SCOPE_REQUIRED', status: 403 });
  });
});

describe('templates', () => {
  it('create, get, list, update, send with vars, sendTest, remove', async () => {
    const created = await pc.templates.create({ name: 'Welcome', subject: 'Hi {{name}}', textBody: 'Hello {{name}}' });
    expect(created).toMatchObject({ error: null, data: { id: expect.stringMatching(/^tpl_/), name: 'Welcome' } });
    const id = created.data!.id;
    expect((await pc.templates.get(id)).data).toEqual({
      id,
      name: 'Welcome',
      subject: 'Hi {{name}}',
      htmlBody: '',
      textBody: 'Hello {{name}}',
    });
    const listed: string[] = [];
    for await (const template of pc.templates.list({ limit: 100 })) listed.push(template.id);
    expect(listed).toContain(id);

    const updated = await pc.templates.update(id, {
      name: 'Welcome 2',
      subject: 'Hey {{name}}',
      textBody: 'Yo {{name}}',
    });
    expect(updated.data).toMatchObject({ id, name: 'Welcome 2', subject: 'Hey {{name}}' });

    const to = uniqueEmail('sdk-template');
    const sent = await pc.templates.send({ to, templateId: id, vars: { name: 'Ada' } });
    expect(sent.data).toMatchObject({ status: 'QUEUED', templateId: id });
    const testTo = uniqueEmail('sdk-send-test');
    const test = await pc.templates.sendTest({ to: testTo });
    expect(test.data).toMatchObject({ id: expect.stringMatching(/^em_/), status: 'QUEUED' });
    await waitForMails(to, 1);
    expect((await mailsTo(to))[0]).toMatchObject({ subject: 'Hey Ada', text: expect.stringContaining('Yo Ada') });
    expect(await waitForMails(testTo, 1)).toBe(1);

    expect((await pc.templates.remove(id)).data).toEqual({ id, deleted: true });
    expect((await pc.templates.get(id)).error).toMatchObject({ code: 'TEMPLATE_NOT_FOUND', status: 404 });
  });
});

describe('domains', () => {
  it('create answers the records to publish; get, list, verify, rotateDkim, enableInbound, remove', async () => {
    const name = `sdk-${randomUUID().slice(0, 8)}.example`;
    const created = await pc.domains.create({ name });
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({ id: expect.stringMatching(/^dom_/), name, status: 'pending' });
    const id = created.data!.id;
    const dkim = created.data!.records.find((r) => r.purpose === 'dkim');
    expect(dkim).toMatchObject({ type: 'TXT', value: expect.stringMatching(/^v=DKIM1; k=rsa; p=/) });
    expect(dkim!.name.endsWith(`._domainkey.${name}`)).toBe(true);
    expect((await pc.domains.get(id)).data).toMatchObject({ id, name, records: created.data!.records });
    const listed: string[] = [];
    for await (const domain of pc.domains.list()) listed.push(domain.id);
    expect(listed).toContain(id);

    // The local resolver publishes only the demo account's records: the check runs and finds nothing yet.
    const verified = await pc.domains.verify(id);
    expect(verified).toMatchObject({ error: null, data: { id, name, status: 'pending' } });
    const rotated = await pc.domains.rotateDkim(id);
    expect(rotated).toMatchObject({ error: null, data: { id, name } });

    // Receiving waits for the domain to sign; its owner publishes the records, and then it can.
    expect((await pc.domains.enableInbound(id)).error).toMatchObject({ code: 'DOMAIN_NOT_VERIFIED', status: 409 });
    await publishRecords(rotated.data!.records);
    expect((await pc.domains.verify(id)).data).toMatchObject({ status: 'verified' });
    const receiving = await pc.domains.enableInbound(id, { subdomain: 'in' });
    expect(receiving.data).toMatchObject({ inbound: { name: `in.${name}` } });
    expect(receiving.data!.records.find((r) => r.purpose === 'inbound_mx')).toMatchObject({ name: `in.${name}` });
    expect((await pc.domains.disableInbound(id)).data).toMatchObject({ inbound: null });

    expect((await pc.domains.remove(id)).data).toEqual({ id, deleted: true });
    expect((await pc.domains.get(id)).error).toMatchObject({ code: 'DOMAIN_NOT_FOUND', status: 404 });
  });
});

describe('senders', () => {
  it('create mails a confirmation and resend another; get, list, remove', async () => {
    const email = uniqueEmail('sdk-sender');
    const created = await pc.senders.create({ email, name: 'SDK Sender' });
    expect(created).toMatchObject({
      error: null,
      data: { id: expect.stringMatching(/^snd_/), email, name: 'SDK Sender', status: 'pending' },
    });
    const id = created.data!.id;
    expect(await waitForMails(email, 1)).toBe(1);
    expect((await pc.senders.get(id)).data).toEqual(created.data);
    const listed: string[] = [];
    for await (const sender of pc.senders.list()) listed.push(sender.id);
    expect(listed).toContain(id);

    expect((await pc.senders.resend(id)).data).toMatchObject({ id, status: 'pending' });
    expect(await waitForMails(email, 2)).toBe(2);

    expect((await pc.senders.remove(id)).data).toEqual({ id, deleted: true });
    expect((await pc.senders.get(id)).error).toMatchObject({ code: 'SENDER_NOT_FOUND', status: 404 });
  });
});

describe('suppressions', () => {
  it('add, list, remove; mail to a suppressed address is SUPPRESSED', async () => {
    const email = uniqueEmail('sdk-suppressed');
    const added = await pc.suppressions.add({ email, note: 'from the SDK test' });
    expect(added).toMatchObject({ error: null, data: { email, reason: 'manual', note: 'from the SDK test' } });
    const suppressed = async () => {
      const all: string[] = [];
      for await (const s of pc.suppressions.list()) all.push(s.email);
      return all;
    };
    expect(await suppressed()).toContain(email);

    const { data } = await pc.emails.send({ to: email, subject: 'Not sent', text: 'x' });
    await expect.poll(() => statusOf(data!.id), { timeout: 30_000 }).toBe('SUPPRESSED');

    expect((await pc.suppressions.remove(email)).data).toEqual({ email, deleted: true });
    expect(await suppressed()).not.toContain(email);
    expect(await mailsTo(email)).toEqual([]);
  });
});

describe('metrics', () => {
  it("answers the account's counts by day; an email queued now is counted", async () => {
    const queuedCount = async () => {
      const { data, error } = await pc.metrics.get({ granularity: 'day' });
      if (error) throw new Error(`${error.code}: ${error.message}`);
      expect(data.granularity).toBe('day');
      expect(data.emails.series.length).toBeGreaterThan(0);
      return data.emails.totals.queued;
    };
    const before = await queuedCount();
    await pc.emails.send({ to: uniqueEmail('sdk-metrics'), subject: 'Counted', text: 'x' });
    await expect.poll(queuedCount, { timeout: 15_000 }).toBeGreaterThanOrEqual(before + 1);
  });
});

describe('inbound', () => {
  it('addresses names the receiving subdomain; routes create, list, get, update, remove', async () => {
    const { data: addresses } = await pc.inbound.addresses();
    const domain = addresses!.domains[0]!.domain;
    expect(domain).toMatch(/\.inbound\.postcode\.localhost$/);
    const { data: route, error } = await pc.inbound.routes.create({ pattern: `support@${domain}`, action: 'webhook' });
    expect(error).toBeNull();
    expect(route).toMatchObject({ pattern: `support@${domain}`, action: 'webhook' });
    expect((await pc.inbound.routes.list()).data!.routes.map((r) => r.id)).toContain(route!.id);
    expect((await pc.inbound.routes.get(route!.id)).data).toEqual(route);
    const { data: changed } = await pc.inbound.routes.update(route!.id, { action: 'reject', rejectReason: 'Gone' });
    expect(changed).toMatchObject({ action: 'reject', rejectReason: 'Gone' });
    expect((await pc.inbound.routes.remove(route!.id)).data).toEqual({ id: route!.id, deleted: true });
    const { error: gone } = await pc.inbound.routes.get(route!.id);
    expect(gone).toMatchObject({ code: 'INBOUND_ROUTE_NOT_FOUND', status: 404 });
  });
});
