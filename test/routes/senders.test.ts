// Senders an account adds itself: /api/v1/senders, /{senderId}, /resend, and the hosted /confirm-sender page.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  call,
  expectError,
  fetchWith,
  newAccount,
  type TestAccount,
  uniqueAddress,
  waitForInbox,
} from '../support/api';
import { verifiedDomain } from '../support/domains';
import type { QueuedEmail } from '../support/responses';
import { newWebhook, waitForEvents } from '../support/webhooks';

type Sender = { id: string; email: string; name: string | null; status: 'pending' | 'verified' };

const addSender = (token: string, body: object) => call<Sender>('POST', '/api/v1/senders', { token, body });
const getSender = (token: string, id: string) => call<Sender>('GET', `/api/v1/senders/${id}`, { token });
const sendFrom = (account: TestAccount, from: string) =>
  call<QueuedEmail>('POST', '/api/v1/emails', {
    token: account.mailKey,
    body: { from, to: uniqueAddress('to'), subject: 'From a sender', text: 'x' },
  });

/** The confirmation link in the latest mail to `address`. */
async function confirmationLink(address: string, count = 1): Promise<string> {
  const mails = await waitForInbox(address, count);
  const link = /http:\/\/postcode\.test\/confirm-sender\?token=[a-z2-7]{32}/.exec(mails.at(-1)!.text)?.[0];
  expect(link, mails.at(-1)!.text).toBeDefined();
  return link!;
}

const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;
const openLink = (link: string) => call('GET', `${new URL(link).pathname}${new URL(link).search}&utm_source=mail`);
const press = (token: string) =>
  call('POST', '/confirm-sender', {
    rawBody: `token=${token}`,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });

describe('POST /api/v1/senders', () => {
  it('pending → the link shows a button and verifies nothing → the press verifies → sendable, with sender.verified', async () => {
    const account = await newAccount();
    const { key } = await newWebhook(account.mailKey, ['sender.verified']);
    const email = uniqueAddress('billing');
    const res = await addSender(account.mailKey, { email, name: 'Billing' });
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({ id: expect.stringMatching(/^snd_/), email, name: 'Billing', status: 'pending' });
    expectError(await sendFrom(account, email), 403, 'SENDER_NOT_VERIFIED');
    expect((await sendFrom(account, email)).json.error.message).toBe(
      `from: ${email} is a pending sender: its address has not confirmed yet`,
    );

    const link = await confirmationLink(email);
    const page = await openLink(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('Content-Security-Policy')).toContain("default-src 'none'");
    expect(page.text).toContain('<form method="post" action="/confirm-sender">');
    expect(page.text).toContain(email);
    // Opening the link (as a mail scanner does) verifies nothing.
    expect((await getSender(account.mailKey, res.json.data.id)).json.data.status).toBe('pending');

    const pressed = await press(tokenOf(link));
    expect(pressed.status).toBe(200);
    expect(pressed.text).toContain('is now a verified sender');
    expect((await getSender(account.mailKey, res.json.data.id)).json.data.status).toBe('verified');
    expect((await sendFrom(account, `Billing <${email}>`)).status).toBe(200);
    const [event] = await waitForEvents(key, ['sender.verified']);
    expect(event!.payload.data).toEqual({ senderId: res.json.data.id, email, status: 'verified' });
  });

  it('an address on a verified domain is verified at once; no mail goes to it', async () => {
    const account = await newAccount();
    const domain = await verifiedDomain(account.mailKey);
    const res = await addSender(account.mailKey, { email: `news@${domain.name}` });
    expect(res.json.data).toMatchObject({ status: 'verified', name: null });
    expect(
      (
        await call('POST', '/api/v1/emails', {
          token: account.mailKey,
          body: { senderEmailId: res.json.data.id, to: uniqueAddress(), subject: 's', text: 't' },
        })
      ).status,
    ).toBe(200);
  });

  it('a used link and an expired one are refused (404 page); the sender stays as it was', async () => {
    const account = await newAccount();
    const used = uniqueAddress('used');
    await addSender(account.mailKey, { email: used });
    const usedToken = tokenOf(await confirmationLink(used));
    expect((await press(usedToken)).status).toBe(200);
    const again = await press(usedToken);
    expect(again.status).toBe(404);
    expect(again.text).toContain('This link does not work');
    expect((await openLink(`http://postcode.test/confirm-sender?token=${usedToken}`)).status).toBe(404);

    const late = uniqueAddress('late');
    const pending = await addSender(account.mailKey, { email: late });
    const lateToken = tokenOf(await confirmationLink(late));
    await env.DB.prepare('UPDATE senders SET confirm_expires_at = ? WHERE id = ?')
      .bind(Date.now() - 1, pending.json.data.id)
      .run();
    expect((await press(lateToken)).status).toBe(404);
    expect((await getSender(account.mailKey, pending.json.data.id)).json.data.status).toBe('pending');
    for (const token of ['', 'x', 'a'.repeat(64), `${lateToken}x`]) expect((await press(token)).status).toBe(404);
  });

  it('400 for an address the account has already; 503 without SMTP', async () => {
    const account = await newAccount();
    expectError(await addSender(account.mailKey, { email: account.senderEmail.toUpperCase() }), 400, 'INVALID_INPUT');
    const noSmtp = await fetchWith({ SMTP_HOST: '' }, 'POST', '/api/v1/senders', {
      token: account.mailKey,
      body: { email: uniqueAddress('nosmtp') },
    });
    expectError(noSmtp, 503, 'SMTP_NOT_CONFIGURED');
  });
});

describe('GET /api/v1/senders', () => {
  it("lists the account's senders (the operator's too) with their status", async () => {
    const account = await newAccount();
    const email = uniqueAddress('listed');
    await addSender(account.mailKey, { email });
    const res = await call<{ senders: Sender[]; total: number }>('GET', '/api/v1/senders', { token: account.mailKey });
    expect(res.json.data.total).toBe(2);
    expect(res.json.data.senders.map((s) => [s.email, s.status])).toEqual([
      [email, 'pending'],
      [account.senderEmail, 'verified'],
    ]);
  });
});

describe('GET /api/v1/senders/{senderId}', () => {
  it("another account's sender is 404 SENDER_NOT_FOUND", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    expect((await getSender(owner.mailKey, owner.senderId)).json.data.status).toBe('verified');
    expectError(await getSender(other.mailKey, owner.senderId), 404, 'SENDER_NOT_FOUND');
  });
});

describe('DELETE /api/v1/senders/{senderId}', () => {
  it('removes the sender: it can no longer send; another account cannot remove it', async () => {
    const account = await newAccount();
    const other = await newAccount();
    expectError(
      await call('DELETE', `/api/v1/senders/${account.senderId}`, { token: other.mailKey }),
      404,
      'SENDER_NOT_FOUND',
    );
    const res = await call('DELETE', `/api/v1/senders/${account.senderId}`, { token: account.mailKey });
    expect(res.json).toEqual({ success: true, data: { id: account.senderId, deleted: true } });
    expectError(await sendFrom(account, account.senderEmail), 403, 'SENDER_NOT_VERIFIED');
    expectError(await getSender(account.mailKey, account.senderId), 404, 'SENDER_NOT_FOUND');
  });
});

describe('POST /api/v1/senders/{senderId}/resend', () => {
  it('mails a new link; the earlier one stops working; a verified sender is answered as it is', async () => {
    const account = await newAccount();
    const email = uniqueAddress('resend');
    const sender = (await addSender(account.mailKey, { email })).json.data;
    const first = tokenOf(await confirmationLink(email));
    const res = await call<Sender>('POST', `/api/v1/senders/${sender.id}/resend`, { token: account.mailKey });
    expect(res.json.data.status).toBe('pending');
    const second = tokenOf(await confirmationLink(email, 2));
    expect(second).not.toBe(first);
    expect((await press(first)).status).toBe(404);
    expect((await press(second)).status).toBe(200);
    const verified = await call<Sender>('POST', `/api/v1/senders/${sender.id}/resend`, { token: account.mailKey });
    expect(verified.json.data.status).toBe('verified');
    expect(await waitForInbox(email, 2)).toHaveLength(2);
    expectError(
      await call('POST', '/api/v1/senders/snd_nope/resend', { token: account.mailKey }),
      404,
      'SENDER_NOT_FOUND',
    );
  });
});
