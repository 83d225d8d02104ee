import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app';
import { emailDb } from '../../support/account-db';
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
import type { EmailList, QueuedEmail, SavedTemplate } from '../../support/responses';

const queue = (token: string, body: unknown, headers?: Record<string, string>) =>
  call<QueuedEmail>('POST', '/api/v1/emails', { token, body, headers });

describe('POST /api/v1/emails', () => {
  it('queues an email that arrives with the right envelope, headers and parts, then shows SENT', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('inline');
    const res = await queue(mailKey, { to, subject: 'Welcome aboard', text: 'Plain body', html: '<p>HTML body</p>' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ success: true, data: { id: expect.stringMatching(/^em_/), status: 'QUEUED' } });

    const [mail] = await waitForInbox(to);
    expect(mail!.envelopeTo).toEqual([to]);
    expect(mail!.envelopeFrom).toBe('no-reply@postcode.dev');
    expect(mail!.from).toContain('no-reply@postcode.dev');
    expect(mail!.to).toEqual([to]);
    expect(mail!.subject).toBe('Welcome aboard');
    expect(mail!.text.trim()).toBe('Plain body');
    expect(mail!.html).toContain('<p>HTML body</p>');
    expect(mail!.messageId).toBe(`<${res.json.data.id}@postcode.dev>`);

    const entry = await waitForStatus(mailKey, res.json.data.id, 'SENT');
    expect(entry).toMatchObject({ subject: 'Welcome aboard', toAddresses: [to], status: 'SENT' });
  });

  it('sends to a list once per distinct address (duplicates sent once)', async () => {
    const { mailKey } = await newAccount();
    const a = uniqueAddress('multi');
    const b = uniqueAddress('multi');
    const res = await queue(mailKey, { to: [a, b, a.toUpperCase()], subject: 'List', text: 'hi' });
    expect(res.status).toBe(200);
    await waitForStatus(mailKey, res.json.data.id, 'SENT');
    const [mail] = await inbox(a);
    expect(mail!.envelopeTo.sort()).toEqual([a, b].sort());
    expect(await inbox(b)).toHaveLength(1);
    const log = await call<EmailList>('GET', '/api/v1/emails', { token: mailKey });
    expect(log.json.data.emails[0]!.toAddresses).toEqual([a, b]);
  });

  it('sends from a verified sender identity of the account', async () => {
    const { mailKey, senderId, senderEmail } = await newAccount();
    const to = uniqueAddress('sender');
    const res = await queue(mailKey, { to, subject: 'From sender', text: 'hi', senderEmailId: senderId });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.envelopeFrom).toBe(senderEmail);
    expect(mail!.from).toContain('Sender Name');
  });

  it('403 SENDER_NOT_VERIFIED for a sender of another account or an unknown one', async () => {
    const mine = await newAccount();
    const other = await newAccount();
    for (const senderEmailId of [other.senderId, 'snd_unknownunknown']) {
      const res = await queue(mine.mailKey, { to: uniqueAddress(), subject: 's', text: 't', senderEmailId });
      expectError(res, 403, 'SENDER_NOT_VERIFIED');
    }
    expect(await sendLogTotal(mine.mailKey)).toBe(0);
  });

  it('includes an https image and renders a saved template with vars', async () => {
    const { mailKey } = await newAccount();
    const tpl = await call<SavedTemplate>('POST', '/api/v1/templates', {
      token: mailKey,
      body: { name: 't', subject: 'ignored {{x}}', htmlBody: '<b>{{ who }}</b>', textBody: 'Hi {{who}}' },
    });
    const to = uniqueAddress('tpl');
    const res = await queue(mailKey, {
      to,
      subject: 'Hello {{who}}',
      templateId: tpl.json.data.id,
      vars: { who: '<Ann & Bob>' },
      imageUrl: 'https://cdn.example.com/logo.png',
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.subject).toBe('Hello <Ann & Bob>');
    expect(mail!.text.trim()).toBe('Hi <Ann & Bob>');
    expect(mail!.html).toContain('<b>&lt;Ann &amp; Bob&gt;</b>');
    expect(mail!.html).toContain('<img src="https://cdn.example.com/logo.png"');
  });

  it('400 INVALID_INPUT for missing to, subject or content, and nothing is queued', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress();
    const cases: [unknown, string][] = [
      [{ subject: 's', text: 't' }, 'to'],
      [{ to, text: 't' }, 'subject'],
      [{ to, subject: 's' }, 'html'],
      [{ to: [], subject: 's', text: 't' }, 'to'],
      [{ to, subject: '', text: 't' }, 'subject'],
      [{ to, subject: 's', text: 't', priority: 'HIGH' }, 'priority'],
      [{ to, subject: 's', text: 't', imageUrl: 'http://example.com/a.png' }, 'imageUrl'],
      [{ to, subject: 's', text: 't', vars: { a: { nested: true } } }, 'vars'],
      [{ to, subject: 's', text: 't', unknownField: 1 }, 'body'],
      [{ to: 42, subject: 's', text: 't' }, 'to'],
      [{ to, subject: ['s'], text: 't' }, 'subject'],
    ];
    await expectFieldErrors((body) => queue(mailKey, body), cases);
    expect(await sendLogTotal(mailKey)).toBe(0);
  });

  it('400 for hostile input: CR/LF in subject and addresses, long local parts, 101 recipients', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('hostile');
    const cases = [
      { to, subject: 'Hi\r\nBcc: victim@example.com', text: 't' },
      { to, subject: 'Hi\nthere', text: 't' },
      { to: `${to}\r\nRCPT TO:<victim@example.com>`, subject: 's', text: 't' },
      { to: `${'a'.repeat(65)}@example.com`, subject: 's', text: 't' },
      { to: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`, subject: 's', text: 't' },
      { to: 'Victim <victim@example.com>', subject: 's', text: 't' },
      { to: 'no-at-sign.example.com', subject: 's', text: 't' },
      { to: 'user@localhost', subject: 's', text: 't' },
      { to: Array.from({ length: 101 }, (_, i) => `r${i}.${to}`), subject: 's', text: 't' },
      { to, subject: 'x'.repeat(999), text: 't' },
      { to, subject: 'Hi {{name}}', text: 't', vars: { name: 'a\r\nBcc: victim@example.com' } },
    ];
    for (const body of cases) expectError(await queue(mailKey, body), 400, 'INVALID_INPUT');
    expect(await sendLogTotal(mailKey)).toBe(0);
    expect(await inbox(to)).toHaveLength(0);
  });

  it('accepts boundary values: 64-character local part, 100 recipients, 998-character subject', async () => {
    const { mailKey } = await newAccount();
    const local = `${'a'.repeat(52)}${crypto.randomUUID().slice(0, 12)}`;
    expect((await queue(mailKey, { to: `${local}@example.com`, subject: 'x'.repeat(998), text: 't' })).status).toBe(
      200,
    );
    const many = Array.from({ length: 100 }, (_, i) => uniqueAddress(`r${i}`));
    expect((await queue(mailKey, { to: many, subject: 's', text: 't' })).status).toBe(200);
  });

  it('keeps <script> in vars out of the HTML part', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('xss');
    const res = await queue(mailKey, {
      to,
      subject: 'x',
      html: '<p>{{v}}</p>',
      text: '{{v}}',
      vars: { v: '<script>alert(1)</script>' },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.html).not.toContain('<script>');
    expect(mail!.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail!.text.trim()).toBe('<script>alert(1)</script>');
  });

  it('400 naming the missing vars; nothing is sent half-filled', async () => {
    const { mailKey } = await newAccount();
    const res = await queue(mailKey, {
      to: uniqueAddress(),
      subject: 'Hi {{ first }}',
      text: '{{last}} {{first}}',
      vars: {},
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toContain('first');
    expect(res.json.error.message).toContain('last');
    expect(await sendLogTotal(mailKey)).toBe(0);
  });

  it('400 naming the template and the size when it would render past a message, unrendered', async () => {
    const { mailKey } = await newAccount();
    const create = (body: object) => call<SavedTemplate>('POST', '/api/v1/templates', { token: mailKey, body });
    const send = (templateId: string, vars: Record<string, string>) =>
      queue(mailKey, { to: uniqueAddress(), subject: 'Hi', templateId, vars });
    // 4,000 placeholders and a 50 KB value: 200 MB.
    const repeated = await create({ name: 'Repeated', subject: 'Hi', textBody: '{{x}}'.repeat(4000) });
    const huge = await send(repeated.json.data.id, { x: 'y'.repeat(50_000) });
    expectError(huge, 400, 'INVALID_INPUT');
    expect(huge.json.error.message).toBe(
      `templateId: template ${repeated.json.data.id} renders to 200000002 bytes with these vars, over the 524288 a message may carry`,
    );
    // HTML-escaping counts: 1,000 placeholders and 100 (then 105) '&', which escape to 500 (525) bytes.
    const escaped = await create({ name: 'Escaped', subject: 'Hi', htmlBody: '<p>{{ v }}</p>'.repeat(1000) });
    const fits = await send(escaped.json.data.id, { v: '&'.repeat(100) });
    expect(fits.status, JSON.stringify(fits.json)).toBe(200);
    const big = await send(escaped.json.data.id, { v: '&'.repeat(105) });
    expectError(big, 400, 'INVALID_INPUT');
    expect(big.json.error.message).toBe(
      `templateId: template ${escaped.json.data.id} renders to 532002 bytes with these vars, over the 524288 a message may carry`,
    );
    expect(await sendLogTotal(mailKey)).toBe(1);
  });

  it("404 TEMPLATE_NOT_FOUND for another account's template", async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const tpl = await call<SavedTemplate>('POST', '/api/v1/templates', {
      token: other.mailKey,
      body: { name: 't', subject: 's', textBody: 'x' },
    });
    const res = await queue(mine.mailKey, { to: uniqueAddress(), subject: 's', templateId: tpl.json.data.id });
    expectError(res, 404, 'TEMPLATE_NOT_FOUND');
  });

  it('records FAILED with the server reply when the SMTP server refuses with 550', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('reject550');
    const res = await queue(mailKey, { to, subject: 'Refused', text: 'x' });
    expect(res.status).toBe(200);
    await waitForStatus(mailKey, res.json.data.id, 'FAILED');
    const row = await (await emailDb(res.json.data.id))
      .prepare('SELECT status, last_reply FROM emails WHERE id = ?')
      .bind(res.json.data.id)
      .first<{ last_reply: string }>();
    expect(row!.last_reply).toContain('550');
    expect(await inbox(to)).toHaveLength(0);
  });

  it('503 SMTP_NOT_CONFIGURED when no SMTP host is set, and nothing is stored', async () => {
    const { mailKey } = await newAccount();
    const app = buildApp();
    const request = new Request('http://postcode.test/api/v1/emails', {
      method: 'POST',
      headers: { Authorization: `Bearer ${mailKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ to: uniqueAddress(), subject: 's', text: 't' }),
    });
    const res = await app.fetch(request, { ...env, SMTP_HOST: '' }, createExecutionContext());
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ success: false, error: { code: 'SMTP_NOT_CONFIGURED' } });
    expect(await sendLogTotal(mailKey)).toBe(0);
  });
});

describe('GET /api/v1/emails', () => {
  it('pages the send log of the caller only, newest first, with total and totalPages', async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await queue(mine.mailKey, { to: uniqueAddress(), subject: `m${i}`, text: 't' })).json.data.id);
    }
    await queue(other.mailKey, { to: uniqueAddress(), subject: 'other', text: 't' });

    const first = await call<EmailList>('GET', '/api/v1/emails?page=1&limit=2', { token: mine.mailKey });
    expect(first.status).toBe(200);
    expect(first.json.data).toMatchObject({ total: 5, page: 1, totalPages: 3 });
    expect(first.json.data.emails.map((e) => e.subject)).toEqual(['m4', 'm3']);
    const entry = first.json.data.emails[0]!;
    expect(Object.keys(entry).sort()).toEqual(['createdAt', 'id', 'status', 'subject', 'toAddresses']);
    expect(entry.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const last = await call<EmailList>('GET', '/api/v1/emails?page=3&limit=2', { token: mine.mailKey });
    expect(last.json.data.emails.map((e) => e.id)).toEqual([ids[0]]);
    const beyond = await call<EmailList>('GET', '/api/v1/emails?page=9&limit=2', { token: mine.mailKey });
    expect(beyond.json.data.emails).toEqual([]);

    const all = await call<EmailList>('GET', '/api/v1/emails', { token: mine.mailKey });
    expect(all.json.data.emails).toHaveLength(5);
    expect(all.json.data.emails.every((e) => e.subject !== 'other')).toBe(true);
  });

  it('400 INVALID_INPUT for page or limit out of range or not a number', async () => {
    const { mailKey } = await newAccount();
    for (const query of ['page=0', 'page=-1', 'page=abc', 'limit=0', 'limit=101', 'limit=1.5', 'limit=']) {
      expectError(await call('GET', `/api/v1/emails?${query}`, { token: mailKey }), 400, 'INVALID_INPUT');
    }
  });
});
