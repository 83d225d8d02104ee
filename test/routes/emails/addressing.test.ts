// cc, bcc, replyTo, tags and custom headers on routes 1 and 3: what arrives, what the detail, the send log and
// the webhooks show, and what is refused.
import { describe, expect, it } from 'vitest';
import {
  call,
  expectError,
  expectFieldErrors,
  inbox,
  newAccount,
  sendLogTotal,
  uniqueAddress,
  waitForInbox,
  waitForStatus,
} from '../../support/api';
import type { EmailDetail, EmailList, QueuedEmail } from '../../support/responses';
import { createTemplate } from '../../support/templates';
import { newWebhook, waitForEvents } from '../../support/webhooks';

const queue = (token: string, body: unknown) => call<QueuedEmail>('POST', '/api/v1/emails', { token, body });
const detail = async (token: string, id: string) =>
  (await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token })).json.data;
/** The header block of a raw message, continuation lines unfolded. */
const headersOf = (raw: string) => raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
const headerLines = (raw: string, name: string) =>
  headersOf(raw)
    .split('\r\n')
    .filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`));

describe('cc, bcc and replyTo', () => {
  it('every recipient gets it; To and Cc name theirs, Reply-To is set, bcc is in no header', async () => {
    const { mailKey } = await newAccount();
    const [to, cc1, cc2, bcc, reply] = ['to', 'cc', 'cc', 'bcc', 'reply'].map((p) => uniqueAddress(p));
    const res = await queue(mailKey, { to, cc: [cc1, cc2], bcc, replyTo: reply, subject: 'Copies', text: 'x' });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(bcc!);
    expect(mail!.envelopeTo.sort()).toEqual([to, cc1, cc2, bcc].sort());
    expect(headerLines(mail!.raw, 'To')).toEqual([`To: ${to}`]);
    expect(headerLines(mail!.raw, 'Cc')).toEqual([`Cc: ${cc1}, ${cc2}`]);
    expect(headerLines(mail!.raw, 'Reply-To')).toEqual([`Reply-To: ${reply}`]);
    expect(headerLines(mail!.raw, 'Bcc')).toEqual([]);
    expect(headersOf(mail!.raw)).not.toContain(bcc!);
    await waitForStatus(mailKey, res.json.data.id, 'SENT');
    const email = await detail(mailKey, res.json.data.id);
    expect(email).toMatchObject({ to: [to], cc: [cc1, cc2], bcc: [bcc], replyTo: [reply] });
    expect(email.recipients.map((r) => [r.email, r.kind, r.status])).toEqual([
      [to, 'to', 'SENT'],
      [cc1, 'cc', 'SENT'],
      [cc2, 'cc', 'SENT'],
      [bcc, 'bcc', 'SENT'],
    ]);
  });

  it('a bcc list that repeats a To address: that one goes out once, as To; the rest stay bcc', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('first');
    const bcc = uniqueAddress('hidden');
    const res = await queue(mailKey, { to, bcc: [bcc, to.toUpperCase()], subject: 'Hidden', text: 'x' });
    const [mail] = await waitForInbox(bcc);
    expect(mail!.envelopeTo.sort()).toEqual([to, bcc].sort());
    await waitForStatus(mailKey, res.json.data.id, 'SENT');
    expect((await detail(mailKey, res.json.data.id)).bcc).toEqual([bcc]);
  });

  it('an address named twice across to, cc and bcc goes out once, in the first of them', async () => {
    const { mailKey } = await newAccount();
    const a = uniqueAddress('dup');
    const b = uniqueAddress('dup');
    const res = await queue(mailKey, { to: a, cc: [b, a.toUpperCase()], bcc: [b, a], subject: 'Once', text: 'x' });
    const [mail] = await waitForInbox(a);
    expect(mail!.envelopeTo.sort()).toEqual([a, b].sort());
    const email = await detail(mailKey, res.json.data.id);
    expect(email.recipients.map((r) => [r.email, r.kind])).toEqual([
      [a, 'to'],
      [b, 'cc'],
    ]);
  });

  it('a cc refused with 550 fails alone; the others get the mail', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('ok');
    const refused = uniqueAddress('reject550');
    const res = await queue(mailKey, { to, cc: refused, subject: 'Partly', text: 'x' });
    await waitForInbox(to);
    await waitForStatus(mailKey, res.json.data.id, 'SENT');
    const email = await detail(mailKey, res.json.data.id);
    expect(email.recipients.find((r) => r.email === refused)).toMatchObject({ kind: 'cc', status: 'FAILED' });
  });

  it('a suppressed cc or bcc is skipped like a suppressed To; the others get the mail', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('kept');
    const cc = uniqueAddress('suppressedcc');
    const bcc = uniqueAddress('suppressedbcc');
    for (const email of [cc, bcc]) {
      expect((await call('POST', '/api/v1/suppressions', { token: mailKey, body: { email } })).status).toBe(201);
    }
    const res = await queue(mailKey, { to, cc, bcc, subject: 'Skip', text: 'x' });
    const [mail] = await waitForInbox(to);
    expect(mail!.envelopeTo).toEqual([to]);
    await waitForStatus(mailKey, res.json.data.id, 'SENT');
    const email = await detail(mailKey, res.json.data.id);
    expect(email.recipients.map((r) => [r.kind, r.status])).toEqual([
      ['to', 'SENT'],
      ['cc', 'SUPPRESSED'],
      ['bcc', 'SUPPRESSED'],
    ]);
  });

  it('at most 100 recipients across to, cc and bcc; bad addresses are named', async () => {
    const { mailKey } = await newAccount();
    const list = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`);
    const base = { subject: 's', text: 'x' };
    expect((await queue(mailKey, { ...base, to: list('t', 40), cc: list('c', 40), bcc: list('b', 20) })).status).toBe(
      200,
    );
    await expectFieldErrors(
      (body) => queue(mailKey, body),
      [
        [{ ...base, to: list('t', 40), cc: list('c', 40), bcc: list('b', 21) }, 'to'],
        [{ ...base, to: 'a@example.com', cc: list('c', 101) }, 'cc'],
        [{ ...base, to: 'a@example.com', cc: ['ok@example.com', 'nope'] }, 'cc[1]'],
        [{ ...base, to: 'a@example.com', bcc: 'x@example.com\r\nRCPT TO:<y@example.com>' }, 'bcc'],
        [{ ...base, to: 'a@example.com', replyTo: 'a@example.com\nBcc: y@example.com' }, 'replyTo'],
        [{ ...base, to: 'a@example.com', replyTo: list('r', 11) }, 'replyTo'],
        [{ ...base, to: 'a@example.com', cc: [] }, 'cc'],
      ],
    );
    expect(await sendLogTotal(mailKey)).toBe(1);
  });

  it('route 3 takes them too', async () => {
    const { mailKey } = await newAccount();
    const template = await createTemplate(mailKey, { subject: 'Hi', textBody: 'Hello' });
    const to = uniqueAddress('tpl');
    const cc = uniqueAddress('tplcc');
    const res = await call('POST', '/api/v1/templates/send', {
      token: mailKey,
      body: { to, cc, templateId: template.id, replyTo: 'help@example.com' },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(cc);
    expect(headerLines(mail!.raw, 'Reply-To')).toEqual(['Reply-To: help@example.com']);
  });
});

describe('tags', () => {
  it('come back in the detail and the webhooks; the send log filters on name:value', async () => {
    const { mailKey } = await newAccount();
    const hook = await newWebhook(mailKey, ['email.queued', 'email.sent']);
    const tagged = await queue(mailKey, {
      to: uniqueAddress('tag'),
      subject: 'Tagged',
      text: 'x',
      tags: [
        { name: 'category', value: 'receipt' },
        { name: 'order_id', value: 'A-17' },
      ],
    });
    await queue(mailKey, {
      to: uniqueAddress('tag'),
      subject: 'Other',
      text: 'x',
      tags: [{ name: 'category', value: 'news' }],
    });
    await queue(mailKey, { to: uniqueAddress('tag'), subject: 'None', text: 'x' });
    const id = tagged.json.data.id;
    expect((await detail(mailKey, id)).tags).toEqual([
      { name: 'category', value: 'receipt' },
      { name: 'order_id', value: 'A-17' },
    ]);
    const log = await call<EmailList>('GET', '/api/v1/emails?tag=category:receipt', { token: mailKey });
    expect(log.json.data.emails.map((e) => e.id)).toEqual([id]);
    expect(log.json.data.total).toBe(1);
    expect(Object.keys(log.json.data.emails[0]!).sort()).toEqual([
      'createdAt',
      'id',
      'status',
      'subject',
      'toAddresses',
    ]);
    const byOrder = await call<EmailList>('GET', '/api/v1/emails?tag=order_id:A-17&status=QUEUED', { token: mailKey });
    expect(byOrder.json.data.total).toBeLessThanOrEqual(1);
    expect((await call<EmailList>('GET', '/api/v1/emails?tag=category:none', { token: mailKey })).json.data.total).toBe(
      0,
    );
    const events = await waitForEvents(hook.key, ['email.queued', 'email.sent']);
    for (const event of events.filter((e) => e.payload.data.emailId === id)) {
      expect(event.payload.data.tags).toEqual([
        { name: 'category', value: 'receipt' },
        { name: 'order_id', value: 'A-17' },
      ]);
    }
  });

  it('refuses more than 10, repeated names, bad characters or lengths, and a bad filter', async () => {
    const { mailKey } = await newAccount();
    const base = { to: uniqueAddress('tag'), subject: 's', text: 'x' };
    const tag = (name: string, value = 'v') => ({ name, value });
    await expectFieldErrors(
      (body) => queue(mailKey, body),
      [
        [{ ...base, tags: Array.from({ length: 11 }, (_, i) => tag(`t${i}`)) }, 'tags'],
        [{ ...base, tags: [tag('a'), tag('a')] }, 'tags'],
        [{ ...base, tags: [tag('a b')] }, 'tags[0].name'],
        [{ ...base, tags: [tag('a', 'x:y')] }, 'tags[0].value'],
        [{ ...base, tags: [tag('a', 'v'.repeat(257))] }, 'tags[0].value'],
        [{ ...base, tags: [tag('')] }, 'tags[0].name'],
        [{ ...base, tags: [tag('a', 'line\r\nX-Injected: 1')] }, 'tags[0].value'],
        [{ ...base, tags: [{ name: 'a' }] }, 'tags[0].value'],
        [{ ...base, tags: [{ ...tag('a'), extra: 1 }] }, 'tags[0]'],
      ],
    );
    for (const filter of ['nocolon', 'a:b%20c', 'a:', ':b', `a:${'v'.repeat(257)}`]) {
      expectError(await call('GET', `/api/v1/emails?tag=${filter}`, { token: mailKey }), 400, 'INVALID_INPUT');
    }
    expect(await sendLogTotal(mailKey)).toBe(0);
  });
});

describe('custom headers', () => {
  it('allowed headers arrive as written; From, To, Subject and Message-ID stay single', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('hdr');
    const headers = {
      'List-Unsubscribe': '<https://example.com/unsubscribe/42>, <mailto:unsub@example.com>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'X-Entity-Ref-ID': 'order-1234',
      'X-Campaign': 'Grüße',
    };
    const res = await queue(mailKey, { to, subject: 'Headers', text: 'x', headers });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    for (const name of ['List-Unsubscribe', 'List-Unsubscribe-Post', 'X-Entity-Ref-ID']) {
      expect(headerLines(mail!.raw, name)).toEqual([`${name}: ${headers[name as keyof typeof headers]}`]);
    }
    expect(headerLines(mail!.raw, 'X-Campaign')[0]).toMatch(/^X-Campaign: =\?UTF-8\?B\?/);
    for (const name of ['From', 'To', 'Subject', 'Message-ID']) expect(headerLines(mail!.raw, name)).toHaveLength(1);
    expect((await detail(mailKey, res.json.data.id)).headers).toEqual(headers);
  });

  it('refuses any other header name and any value with CR, LF or NUL; nothing is sent', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('hdrbad');
    const base = { to, subject: 's', text: 'x' };
    const names = [
      'From',
      'To',
      'Subject',
      'Message-ID',
      'Bcc',
      'Cc',
      'Reply-To',
      'Content-Type',
      'X',
      'X-a:b',
      'X-a b',
      'Date',
    ];
    await expectFieldErrors(
      (body) => queue(mailKey, body),
      [
        ...names.map((name): [unknown, string] => [{ ...base, headers: { [name]: 'v' } }, 'headers']),
        [{ ...base, headers: { 'X-Ok': 'v\r\nBcc: victim@example.com' } }, 'headers'],
        [{ ...base, headers: { 'X-Ok': 'v\nX-Injected: 1' } }, 'headers'],
        [{ ...base, headers: { 'X-Ok': 'v\r' } }, 'headers'],
        [{ ...base, headers: { 'X-Ok': 'v\0' } }, 'headers'],
        [{ ...base, headers: { 'X-Ok': '' } }, 'headers'],
        [{ ...base, headers: { 'X-Ok': 'v'.repeat(901) } }, 'headers'],
        [{ ...base, headers: { 'X-Ok': 'a', 'x-ok': 'b' } }, 'headers'],
        [{ ...base, headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])) }, 'headers'],
        [{ ...base, headers: { 'X-Ok': 5 } }, 'headers'],
      ],
    );
    expect(await sendLogTotal(mailKey)).toBe(0);
    expect(await inbox(to)).toEqual([]);
  });
});
