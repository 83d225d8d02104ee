// Mail to an account's receiving domain through the Worker's email() handler: what its route does (refuse, store,
// store and send `email.received`), what is kept (the parsed fields, the exact bytes, the attachments), the thread
// link, the flags, the limits and tenancy, read back through /api/v1/inbound.
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { accountStore } from '../../src/store/account/client';
import { call, expectError, newAccount, uniqueAddress } from '../support/api';
import { runBatch, storedEmail } from '../support/delivery';
import {
  autoReplyMessage,
  deliveryReport,
  HTML_ATTACHMENTS,
  HTML_TEXT,
  htmlWithAttachments,
  type InboundFixture,
  inboundBytes,
  LATIN1_TEXT,
  latin1Message,
  oversizedMessage,
  PLAIN_TEXT,
  plainMessage,
  replyTo,
  spoofedOwnDomain,
} from '../support/inbound-mail';
import { DAY_MS, runRetention } from '../support/retention';
import { newWebhook, type Received, receivedAt, waitForEvents } from '../support/webhooks';

type Mailbox = { address: string; name: string };
type Summary = { id: string; to: string; from: Mailbox | null; subject: string | null; emailId: string | null };
type Detail = Summary & {
  autoReply: boolean;
  deliveryReport: boolean;
  spoofed: boolean;
  text: string | null;
  html: string | null;
  cc: Mailbox[];
  replyTo: Mailbox[];
  references: string[];
  inReplyTo: string | null;
  authentication: { spf: string; dkim: string; dmarc: string };
  attachments: {
    index: number;
    filename: string;
    contentType: string;
    size: number;
    url: string;
    contentId: string | null;
  }[];
  rawUrl: string;
  size: number;
};
type List = { messages: Summary[]; total: number; nextCursor: string | null };

/** An account receiving at its subdomain with these routes (`local part` → action). */
async function receiving(routes: Record<string, string>) {
  const account = await newAccount(`Inbound ${crypto.randomUUID().slice(0, 8)}`);
  const addresses = await call<{ domains: { domain: string }[] }>('GET', '/api/v1/inbound/addresses', {
    token: account.mailKey,
  });
  const domain = addresses.json.data.domains[0]!.domain;
  for (const [local, action] of Object.entries(routes)) {
    const [kind, reason] = action.split(':');
    const body = { pattern: `${local}@${domain}`, action: kind, ...(reason ? { rejectReason: reason } : {}) };
    expect((await call('POST', '/api/v1/inbound/routes', { token: account.mailKey, body })).status).toBe(201);
  }
  return { ...account, domain, at: (local: string) => `${local}@${domain}` };
}

/** Hands a message to the email() handler; what it was refused with (null: taken). */
async function deliver(fixture: InboundFixture, bindings: Cloudflare.Env = env) {
  const { message, state } = inboundBytes(fixture);
  await worker.email(message, bindings);
  return state.rejected;
}

const list = async (token: string, query = '') =>
  (await call<List>('GET', `/api/v1/inbound${query}`, { token })).json.data;
const only = async (token: string) => {
  const { messages } = await list(token);
  expect(messages).toHaveLength(1);
  return (await call<Detail>('GET', `/api/v1/inbound/${messages[0]!.id}`, { token })).json.data;
};

describe('email(): receiving', () => {
  it('a plain message to a webhook route: stored, its exact bytes kept, sent as a signed email.received', async () => {
    const account = await receiving({ support: 'webhook' });
    const { key } = await newWebhook(account.mailKey, ['email.received']);
    const fixture = plainMessage({
      to: account.at('Support'),
      subject: 'Grüße aus Köln 👋',
      cc: ['grace@example.org'],
      replyTo: 'ada.replies@example.com',
    });
    expect(await deliver(fixture)).toBeNull();
    const detail = await only(account.mailKey);
    expect(detail).toMatchObject({
      to: account.at('support'),
      from: { address: 'ada.lovelace@gmail.com', name: 'Ada Lovelace' },
      subject: 'Grüße aus Köln 👋',
      cc: [{ address: 'grace@example.org', name: expect.any(String) }],
      replyTo: [{ address: 'ada.replies@example.com', name: expect.any(String) }],
      text: PLAIN_TEXT,
      emailId: null,
      autoReply: false,
      deliveryReport: false,
      spoofed: false,
      authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
      attachments: [],
    });
    const raw = await call('GET', detail.rawUrl, { token: account.mailKey });
    expect(raw.headers.get('Content-Type')).toBe('message/rfc822');
    expect(raw.text).toBe(fixture.raw);
    expect(detail.size).toBe(new TextEncoder().encode(fixture.raw).length);

    const [event] = (await waitForEvents(key, ['email.received'])) as Received[];
    expect(event!.signatureValid).toBe(true);
    expect(event!.payload.data).toMatchObject({
      inboundId: detail.id,
      to: account.at('support'),
      subject: 'Grüße aus Köln 👋',
      text: PLAIN_TEXT,
      url: `/api/v1/inbound/${detail.id}`,
      rawUrl: detail.rawUrl,
      authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
    });
  });

  it('html with attachments: each kept byte for byte; the event links to them and carries no bytes', async () => {
    const account = await receiving({ '*': 'webhook' });
    const { key } = await newWebhook(account.mailKey, ['email.received']);
    expect(await deliver(htmlWithAttachments({ to: account.at('billing') }))).toBeNull();
    const detail = await only(account.mailKey);
    expect(detail.text?.trimEnd()).toBe(HTML_TEXT.trimEnd());
    expect(detail.html).toContain('cid:sig@01DB5F2A.5C0E');
    expect(detail.attachments.map((a) => [a.filename, a.contentType, a.size])).toEqual(
      HTML_ATTACHMENTS.map((a) => [a.filename, a.mimeType, a.size]),
    );
    for (const [index, sent] of HTML_ATTACHMENTS.entries()) {
      const got = await exports.default.fetch(
        new Request(`http://postcode.test${detail.attachments[index]!.url}`, {
          headers: { Authorization: `Bearer ${account.mailKey}` },
        }),
      );
      expect(got.status).toBe(200);
      expect(got.headers.get('Content-Type')).toBe(sent.mimeType);
      expect(got.headers.get('Content-Disposition')).toContain(sent.filename);
      expect(new Uint8Array(await got.arrayBuffer())).toEqual(sent.bytes);
    }
    const [event] = await waitForEvents(key, ['email.received']);
    const data = event!.payload.data as { attachments: { url: string; size: number }[] };
    expect(data.attachments.map((a) => a.url)).toEqual(detail.attachments.map((a) => a.url));
    expect(event!.raw).not.toContain(btoa(String.fromCharCode(...HTML_ATTACHMENTS[1].bytes.slice(0, 48))));
  });

  it("a reply names the account's sent email: linked; another account's email links nothing", async () => {
    const account = await receiving({ support: 'store' });
    const other = await newAccount();
    const mine = await storedEmail(account.accountId, [uniqueAddress('thread')]);
    const theirs = await storedEmail(other.accountId, [uniqueAddress('thread')]);
    await runBatch([mine, theirs]);
    const reply = replyTo({
      to: account.at('support'),
      inReplyTo: `<${mine}@postcode.dev>`,
      references: [`<root@example.com>`, `<${mine}@postcode.dev>`],
    });
    expect(await deliver(reply)).toBeNull();
    const received = await only(account.mailKey);
    expect(received.emailId).toBe(mine);
    // The email's detail lists it.
    const sent = await call<{ replies: unknown[] }>('GET', `/api/v1/emails/${mine}`, { token: account.mailKey });
    expect(sent.json.data.replies).toEqual([
      {
        inboundId: received.id,
        from: received.from,
        subject: received.subject,
        receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        autoReply: false,
        deliveryReport: false,
        url: `/api/v1/inbound/${received.id}`,
      },
    ]);
    const stranger = await receiving({ support: 'store' });
    expect(await deliver(replyTo({ to: stranger.at('support'), inReplyTo: `<${theirs}@postcode.dev>` }))).toBeNull();
    expect((await only(stranger.mailKey)).emailId).toBeNull();
    const theirDetail = await call<{ replies: unknown[] }>('GET', `/api/v1/emails/${theirs}`, { token: other.mailKey });
    expect(theirDetail.json.data.replies).toEqual([]);
  });

  it('auto-replies and delivery reports are stored with a flag, never sent as email.received', async () => {
    const account = await receiving({ '*': 'webhook' });
    const { key } = await newWebhook(account.mailKey, ['email.received']);
    expect(await deliver(autoReplyMessage({ to: account.at('support') }))).toBeNull();
    expect(await deliver(autoReplyMessage({ to: account.at('support'), signals: ['X-Autoreply'] }))).toBeNull();
    expect(await deliver(deliveryReport({ to: account.at('support') }))).toBeNull();
    // A person's mail that says Auto-Submitted: no is a person's mail.
    expect(await deliver(autoReplyMessage({ to: account.at('support'), autoSubmitted: 'no' }))).toBeNull();
    const { messages } = await list(account.mailKey);
    expect(messages).toHaveLength(4);
    const details = await Promise.all(
      messages.map(
        async (m) => (await call<Detail>('GET', `/api/v1/inbound/${m.id}`, { token: account.mailKey })).json.data,
      ),
    );
    // The report is machine mail too (it says Auto-Submitted): flagged both ways.
    expect(details.filter((d) => d.autoReply && !d.deliveryReport)).toHaveLength(2);
    expect(details.filter((d) => d.deliveryReport)).toHaveLength(1);
    const person = details.find((d) => !d.autoReply && !d.deliveryReport)!;
    const [event] = await waitForEvents(key, ['email.received']);
    expect((event!.payload.data as { inboundId: string }).inboundId).toBe(person.id);
    expect((await receivedAt(key)).length).toBe(1);
  });

  it("a notice from the null sender is a report; a person's mail about a failure is a person's", async () => {
    const account = await receiving({ '*': 'webhook' });
    const { key } = await newWebhook(account.mailKey, ['email.received']);
    const notice = plainMessage({
      to: account.at('support'),
      from: 'mailer@mx.example.net',
      subject: 'Mail delivery failed',
      text: 'There was an error delivering your mail to <ghost@example.org>.\n550 5.1.1 User unknown',
    });
    expect(await deliver({ ...notice, from: '' })).toBeNull();
    const person = plainMessage({
      to: account.at('support'),
      subject: 'Delivery failure: my order never came',
      text: 'I could not log in and the page said error 550. Unable to track my parcel.',
    });
    expect(await deliver(person)).toBeNull();
    const { messages } = await list(account.mailKey);
    const flagged = await Promise.all(
      messages.map(
        async (m) => (await call<Detail>('GET', `/api/v1/inbound/${m.id}`, { token: account.mailKey })).json.data,
      ),
    );
    expect(flagged.map((d) => [d.subject, d.deliveryReport]).sort()).toEqual([
      ['Delivery failure: my order never came', false],
      ['Mail delivery failed', true],
    ]);
    const [event] = await waitForEvents(key, ['email.received']);
    expect((event!.payload.data as { subject: string }).subject).toBe('Delivery failure: my order never came');
    expect((await receivedAt(key)).length).toBe(1);
  });

  it("mail claiming the account's own domain that fails DMARC is flagged", async () => {
    const account = await receiving({ support: 'store' });
    expect(await deliver(spoofedOwnDomain({ to: account.at('support'), ownDomain: account.domain }))).toBeNull();
    const detail = await only(account.mailKey);
    expect(detail).toMatchObject({ spoofed: true, authentication: { dmarc: 'fail' } });
    const elsewhere = await receiving({ support: 'store' });
    expect(
      await deliver(spoofedOwnDomain({ to: elsewhere.at('support'), ownDomain: 'someone-else.example' })),
    ).toBeNull();
    expect((await only(elsewhere.mailKey)).spoofed).toBe(false);
  });

  it('an ISO-8859-1 message is decoded; no Authentication-Results is unknown', async () => {
    const account = await receiving({ support: 'store' });
    expect(await deliver(latin1Message({ to: account.at('support'), auth: null }))).toBeNull();
    expect(await only(account.mailKey)).toMatchObject({
      subject: 'Café',
      from: { name: 'Renée Dupré' },
      text: LATIN1_TEXT,
      authentication: { spf: 'unknown', dkim: 'unknown', dmarc: 'unknown' },
    });
  });
});

describe('email(): refusals (nothing stored)', () => {
  it('no route matches, a reject route, an unknown subdomain: refused with a reason', async () => {
    const account = await receiving({ support: 'store', 'old+*': 'reject:Write to help@acme.example' });
    expect(await deliver(plainMessage({ to: account.at('sales') }))).toMatch(/^5\.1\.1 /);
    expect(await deliver(plainMessage({ to: account.at('support+x') }))).toMatch(/^5\.1\.1 /);
    expect(await deliver(plainMessage({ to: account.at('old+2019') }))).toBe('5.7.1 Write to help@acme.example');
    expect(await deliver(plainMessage({ to: `support@nobody-here.${env.INBOUND_DOMAIN}` }))).toMatch(/^5\.1\.1 /);
    expect((await list(account.mailKey)).messages).toEqual([]);
  });

  it('a message over INBOUND_MAX_BYTES is refused naming its size', async () => {
    const account = await receiving({ support: 'store' });
    const big = oversizedMessage({ to: account.at('support'), bytes: 5_000 });
    const size = new TextEncoder().encode(big.raw).length;
    const refused = await deliver(big, { ...env, INBOUND_MAX_BYTES: '4096' });
    expect(refused).toBe(`5.3.4 Message too big: ${size} bytes; this address takes at most 4096`);
    expect((await list(account.mailKey)).messages).toEqual([]);
  });

  it('past INBOUND_RATE_PER_ACCOUNT in a minute: refused for now (4xx)', async () => {
    const account = await receiving({ support: 'store' });
    const limited = { ...env, INBOUND_RATE_PER_ACCOUNT: '2' };
    expect(await deliver(plainMessage({ to: account.at('support') }), limited)).toBeNull();
    expect(await deliver(plainMessage({ to: account.at('support') }), limited)).toBeNull();
    expect(await deliver(plainMessage({ to: account.at('support') }), limited)).toMatch(/^4\.7\.0 /);
    expect((await list(account.mailKey)).total).toBe(2);
  });
});

describe('GET /api/v1/inbound', () => {
  it('filters by recipient, sender and time; pages with a cursor; another account sees none of it', async () => {
    const account = await receiving({ '*': 'store' });
    const before = new Date(Date.now() - 1000).toISOString();
    for (const local of ['a', 'b', 'a']) expect(await deliver(plainMessage({ to: account.at(local) }))).toBeNull();
    expect(await deliver(plainMessage({ to: account.at('c'), from: 'grace@example.org' }))).toBeNull();
    expect((await list(account.mailKey)).total).toBe(4);
    expect((await list(account.mailKey, `?to=${encodeURIComponent(account.at('a'))}`)).total).toBe(2);
    expect((await list(account.mailKey, '?from=grace%40example.org')).total).toBe(1);
    expect((await list(account.mailKey, `?since=${encodeURIComponent(before)}`)).total).toBe(4);
    expect((await list(account.mailKey, `?until=${encodeURIComponent(before)}`)).total).toBe(0);
    const first = await list(account.mailKey, '?limit=3');
    expect(first.messages).toHaveLength(3);
    const second = await list(account.mailKey, `?limit=3&after=${first.nextCursor}`);
    expect(second.messages).toHaveLength(1);
    expect(new Set([...first.messages, ...second.messages].map((m) => m.id)).size).toBe(4);

    const other = await newAccount();
    expect((await list(other.mailKey)).messages).toEqual([]);
    const id = first.messages[0]!.id;
    for (const path of [`/api/v1/inbound/${id}`, `/api/v1/inbound/${id}/raw`, `/api/v1/inbound/${id}/attachments/0`]) {
      expectError(await call('GET', path, { token: other.mailKey }), 404, 'INBOUND_NOT_FOUND');
    }
    expectError(
      await call('GET', `/api/v1/inbound/${id}/attachments/0`, { token: account.mailKey }),
      404,
      'INBOUND_NOT_FOUND',
    );
    expectError(await call('GET', '/api/v1/inbound', { token: other.serverKey }), 403, 'SCOPE_REQUIRED');
    // The store is the account's object: the row is there, not in another account's.
    expect(await accountStore(env, other.accountId).findInbound(other.accountId, id)).toBeNull();
  });
});

describe('retention', () => {
  it('received mail older than RETENTION_DAYS is deleted with its raw bytes and attachments', async () => {
    const account = await receiving({ support: 'store' });
    expect(await deliver(htmlWithAttachments({ to: account.at('support') }))).toBeNull();
    const { id } = await only(account.mailKey);
    const keys: [R2Bucket, string][] = [
      [env.BODIES, `inbound/${account.accountId}/${id}/raw`],
      ...HTML_ATTACHMENTS.map((_, n): [R2Bucket, string] => [
        env.ATTACHMENTS,
        `inbound/${account.accountId}/${id}/attachments/${n}`,
      ]),
    ];
    for (const [bucket, key] of keys) expect(await bucket.head(key), key).not.toBeNull();
    // RETENTION_DAYS (30) not yet passed: kept.
    expect((await runRetention(account.accountId, env, new Date(Date.now() + 29 * DAY_MS))).inbound).toBe(0);
    expect((await list(account.mailKey)).total).toBe(1);
    expect((await runRetention(account.accountId, env, new Date(Date.now() + 31 * DAY_MS))).inbound).toBe(1);
    expect((await list(account.mailKey)).total).toBe(0);
    for (const [bucket, key] of keys) expect(await bucket.head(key), key).toBeNull();
  });
});
