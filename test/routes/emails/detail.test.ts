// GET /api/v1/emails/{emailId} (one email, whole) and the send log's filters (route 2).
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bodyKeyOf } from '../../../src/mail/bodies';
import { call, eventually, expectError, newAccount, uniqueAddress, waitForStatus } from '../../support/api';
import { bounce, runBatch, storedEmail } from '../../support/delivery';
import type { EmailDetail, EmailList, QueuedEmail, TemplateQueued } from '../../support/responses';
import { createTemplate } from '../../support/templates';

const queue = async (mailKey: string, body: object) => {
  const res = await call<QueuedEmail>('POST', '/api/v1/emails', { token: mailKey, body });
  expect(res.status).toBe(200);
  return res.json.data.id;
};

describe('GET /api/v1/emails/{emailId}', () => {
  it('the delivered email with its recipients and timeline', async () => {
    const account = await newAccount();
    const to = uniqueAddress('detail');
    const id = await queue(account.mailKey, { to, subject: 'Receipt', text: 'x', senderEmailId: account.senderId });
    await waitForStatus(account.mailKey, id, 'SENT');
    const res = await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: account.mailKey });
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({
      id,
      status: 'SENT',
      from: account.senderEmail,
      to: [to],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Receipt',
      messageId: expect.stringMatching(new RegExp(`^<${id}@`)),
      text: 'x',
      tags: [],
      headers: {},
      attachments: [],
      test: false,
      createdAt: expect.any(String),
      sentAt: expect.any(String),
      attempts: 1,
      recipients: [{ email: to, kind: 'to', status: 'SENT', route: 'smtp' }],
      events: [
        { type: 'queued', at: expect.any(String) },
        { type: 'sent', at: expect.any(String), detail: to, route: 'smtp' },
      ],
      replies: [],
    });
    expect(Date.parse(res.json.data.sentAt!)).toBeGreaterThanOrEqual(Date.parse(res.json.data.createdAt));
  });

  it('the body as sent: read back from storage, a template rendered with its vars', async () => {
    const { mailKey } = await newAccount();
    const html = `<p>${'Thanks for your order. '.repeat(1500)}</p>`;
    const inline = await queue(mailKey, { to: uniqueAddress('body'), subject: 'Long', html });
    const template = await createTemplate(mailKey, {
      subject: 'Hi {{name}}',
      htmlBody: '<p>Dear {{name}}</p>',
      textBody: 'Dear {{ name }}',
    });
    const sent = await call<TemplateQueued>('POST', '/api/v1/templates/send', {
      token: mailKey,
      body: { to: uniqueAddress('body'), templateId: template.id, vars: { name: '<Ann>' } },
    });
    const detail = async (id: string) =>
      (await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey })).json.data;
    const long = await detail(inline);
    expect(long.html).toBe(html);
    expect('text' in long).toBe(false);
    const rendered = await detail(sent.json.data.id);
    expect(rendered).toMatchObject({ subject: 'Hi <Ann>', text: 'Dear <Ann>' });
    expect(rendered.html).toContain('<p>Dear &lt;Ann&gt;</p>');
  });

  it('a body missing from storage leaves html and text out and the rest of the detail intact', async () => {
    const { mailKey } = await newAccount();
    const id = await queue(mailKey, { to: uniqueAddress('lost'), subject: 'Lost', html: '<p>x</p>', text: 'x' });
    // Once the account's alarm has moved the body to R2, R2 loses it.
    await eventually(async () => ((await env.BODIES.head(bodyKeyOf(id))) ? true : undefined), 'the body in R2');
    await env.BODIES.delete(bodyKeyOf(id));
    const res = await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ id, subject: 'Lost' });
    expect(Object.keys(res.json.data)).not.toContain('html');
    expect(Object.keys(res.json.data)).not.toContain('text');
  });

  it('a refused email keeps the last reply', async () => {
    const { mailKey } = await newAccount();
    const id = await queue(mailKey, { to: uniqueAddress('reject550'), subject: 'no', text: 'x' });
    await waitForStatus(mailKey, id, 'FAILED');
    const { json } = await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey });
    expect(json.data.lastReply).toMatch(/^550/);
    expect(json.data.sentAt).toBeUndefined();
    expect(json.data.events.map((e) => e.type)).toEqual(['queued', 'failed']);
  });

  it("404 EMAIL_NOT_FOUND for an unknown id and for another account's email", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const id = await queue(owner.mailKey, { to: uniqueAddress('private'), subject: 's', text: 'x' });
    expectError(await call('GET', `/api/v1/emails/${id}`, { token: stranger.mailKey }), 404, 'EMAIL_NOT_FOUND');
    expectError(
      await call('GET', '/api/v1/emails/em_doesnotexist00000000', { token: owner.mailKey }),
      404,
      'EMAIL_NOT_FOUND',
    );
  });

  it('400 INVALID_INPUT for an id outside 3-128 characters', async () => {
    const { mailKey } = await newAccount();
    expectError(await call('GET', '/api/v1/emails/ab', { token: mailKey }), 400, 'INVALID_INPUT');
    expectError(await call('GET', `/api/v1/emails/${'e'.repeat(129)}`, { token: mailKey }), 400, 'INVALID_INPUT');
  });
});

describe('GET /api/v1/emails: filters', () => {
  it('status and to narrow the log; to matches any spelling of the mailbox', async () => {
    const { mailKey } = await newAccount();
    const alice = uniqueAddress('alice');
    const sent = await queue(mailKey, { to: alice, subject: 'a', text: 'x' });
    const failed = await queue(mailKey, { to: uniqueAddress('reject550'), subject: 'b', text: 'x' });
    const both = await queue(mailKey, { to: [uniqueAddress('bob'), alice], subject: 'c', text: 'x' });
    for (const [id, status] of [
      [sent, 'SENT'],
      [failed, 'FAILED'],
      [both, 'SENT'],
    ] as const) {
      await waitForStatus(mailKey, id, status);
    }
    const ids = async (query: string) => {
      const res = await call<EmailList>('GET', `/api/v1/emails?${query}`, { token: mailKey });
      expect(res.status).toBe(200);
      return { ids: res.json.data.emails.map((e) => e.id), total: res.json.data.total };
    };
    expect(await ids('status=FAILED')).toEqual({ ids: [failed], total: 1 });
    expect(await ids('status=SENT')).toEqual({ ids: [both, sent], total: 2 });
    expect(await ids(`to=${encodeURIComponent(alice.toUpperCase())}`)).toEqual({ ids: [both, sent], total: 2 });
    expect(await ids(`to=${encodeURIComponent(alice)}&status=FAILED`)).toEqual({ ids: [], total: 0 });
    expect(await ids(`to=${encodeURIComponent(alice)}&limit=1&page=2`)).toEqual({ ids: [sent], total: 2 });
  });

  it('bounceReason: the emails with a recipient that bounced for it, with the other filters', async () => {
    const { accountId, mailKey } = await newAccount();
    const [ada, grace, linus] = [uniqueAddress('ada'), uniqueAddress('grace'), uniqueAddress('linus')];
    const full = await storedEmail(accountId, [ada, grace]);
    const blocked = await storedEmail(accountId, [linus, ada]);
    const fine = await storedEmail(accountId, grace);
    await runBatch([full, blocked, fine]);
    await bounce(full, grace, 'mailbox_full');
    await bounce(blocked, linus, 'blocked');
    await bounce(blocked, ada, 'blocked');
    const ids = async (query: string) => {
      const res = await call<EmailList>('GET', `/api/v1/emails?${query}`, { token: mailKey });
      expect(res.status, query).toBe(200);
      return { ids: res.json.data.emails.map((e) => e.id), total: res.json.data.total };
    };
    expect(await ids('bounceReason=mailbox_full')).toEqual({ ids: [full], total: 1 });
    // Two recipients blocked: the email comes once.
    expect(await ids('bounceReason=blocked')).toEqual({ ids: [blocked], total: 1 });
    expect(await ids('bounceReason=blocked&status=BOUNCED')).toEqual({ ids: [blocked], total: 1 });
    expect(await ids('bounceReason=mailbox_full&status=BOUNCED')).toEqual({ ids: [], total: 0 });
    // Any recipient of the email: ada is on both, and bounced on one only.
    expect(await ids(`bounceReason=mailbox_full&to=${encodeURIComponent(ada)}`)).toEqual({ ids: [full], total: 1 });
    expect(await ids('bounceReason=user_unknown')).toEqual({ ids: [], total: 0 });
    const detail = await call<EmailDetail>('GET', `/api/v1/emails/${full}`, { token: mailKey });
    expect(
      detail.json.data.recipients.map(({ status, bounceType, bounceReason }) => ({ status, bounceType, bounceReason })),
    ).toEqual([{ status: 'SENT' }, { status: 'BOUNCED', bounceType: 'soft', bounceReason: 'mailbox_full' }]);
  });

  it('400 INVALID_INPUT for an unknown status or bounce reason, or a to that is not an address', async () => {
    const { mailKey } = await newAccount();
    expectError(await call('GET', '/api/v1/emails?status=LOST', { token: mailKey }), 400, 'INVALID_INPUT');
    expectError(await call('GET', '/api/v1/emails?to=not-an-address', { token: mailKey }), 400, 'INVALID_INPUT');
    for (const reason of ['mailboxfull', 'MAILBOX_FULL', 'hard', '']) {
      const res = await call('GET', `/api/v1/emails?bounceReason=${reason}`, { token: mailKey });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message, reason).toMatch(/^bounceReason/);
    }
  });
});
