// Per-recipient outcomes and the suppression list, through the real consumer and a real SMTP server.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { accountStore } from '../../src/store/account/client';
import { call, inbox, newAccount, uniqueAddress, waitForInbox } from '../support/api';
import { makeDue, runBatch, storedEmail } from '../support/delivery';
import type { EmailDetail, QueuedEmail, SuppressionList } from '../support/responses';

/** The email as its account's object holds it. */
const findEmail = (accountId: string, id: string) => accountStore(env, accountId).findEmail(id);

const detail = async (mailKey: string, id: string) =>
  (await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey })).json.data;

describe('per-recipient outcomes', () => {
  it('one 550 among three recipients: two delivered, email SENT, the third FAILED and suppressed', async () => {
    const { accountId, mailKey } = await newAccount();
    const good = [uniqueAddress('good'), uniqueAddress('good')];
    const refused = uniqueAddress('reject550');
    const id = await storedEmail(accountId, [good[0]!, refused, good[1]!]);
    const result = await runBatch([id]);
    expect(result.explicitAcks).toEqual([`msg-0-${id}`]);

    const delivered = await inbox(good[0]!);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.envelopeTo.sort()).toEqual(good.map((g) => g.toLowerCase()).sort());
    expect(delivered[0]!.to).toHaveLength(3); // the To header names every recipient as given
    expect(await inbox(refused)).toHaveLength(0);

    const email = await detail(mailKey, id);
    expect(email.status).toBe('SENT');
    expect(email.recipients).toEqual([
      { email: good[0], kind: 'to', status: 'SENT', route: 'smtp' },
      { email: refused, kind: 'to', status: 'FAILED', reply: expect.stringMatching(/^550/), route: 'smtp' },
      { email: good[1], kind: 'to', status: 'SENT', route: 'smtp' },
    ]);
    expect(email.events.map((e) => e.type)).toEqual(['queued', 'sent', 'failed']);
    expect(email.events[2]!.detail).toContain(refused);

    const list = await call<SuppressionList>('GET', '/api/v1/suppressions', { token: mailKey });
    expect(list.json.data.suppressions).toEqual([
      {
        email: refused.toLowerCase(),
        reason: 'rcpt_rejected',
        note: expect.stringMatching(/^550/),
        emailId: id,
        expiresAt: null,
        createdAt: expect.any(String),
      },
    ]);
  });

  it('the next mail to a suppressed address skips it; mail only to it ends SUPPRESSED without SMTP', async () => {
    const { mailKey } = await newAccount();
    const refused = uniqueAddress('reject550');
    const first = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: refused, subject: 'first', text: 'x' },
    });
    await waitForFinal(mailKey, first.json.data.id);

    const other = uniqueAddress('other');
    // A different spelling of the same mailbox is the same suppressed address.
    const mixed = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: [refused.toUpperCase(), other], subject: 'mixed', text: 'x' },
    });
    const only = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: refused, subject: 'only', text: 'x' },
    });
    const mixedDetail = await waitForFinal(mailKey, mixed.json.data.id);
    expect(mixedDetail.status).toBe('SENT');
    expect(mixedDetail.recipients.map((r) => r.status)).toEqual(['SUPPRESSED', 'SENT']);
    expect((await waitForInbox(other))[0]!.envelopeTo).toEqual([other.toLowerCase()]);

    const onlyDetail = await waitForFinal(mailKey, only.json.data.id);
    expect(onlyDetail).toMatchObject({ status: 'SUPPRESSED', attempts: 0 });
    expect(onlyDetail.events.map((e) => e.type)).toEqual(['queued', 'suppressed']);
    expect(await inbox(refused)).toHaveLength(0);
  });

  it('a 451 at RCPT defers that recipient only: the others get it now, the retry goes to it alone', async () => {
    const { accountId, mailKey } = await newAccount();
    const now = uniqueAddress('now');
    const later = uniqueAddress('rcpt451');
    const id = await storedEmail(accountId, [now, later]);
    const first = await runBatch([id]);
    expect(first.retryMessages.map((m) => m.msgId)).toEqual([`msg-0-${id}`]);
    expect(await inbox(now)).toHaveLength(1);
    let email = await detail(mailKey, id);
    expect(email.status).toBe('QUEUED');
    expect(email.recipients).toEqual([
      { email: now, kind: 'to', status: 'SENT', route: 'smtp' },
      { email: later, kind: 'to', status: 'QUEUED', reply: expect.stringMatching(/^451/), route: 'smtp' },
    ]);
    expect(email.events.map((e) => e.type)).toEqual(['queued', 'sent', 'deferred']);

    // The retry: only the waiting recipient is in the envelope; it is refused again and, being the
    // last attempt, FAILED. The email stays SENT (one recipient got it); a 4xx never suppresses.
    await makeDue(id);
    await runBatch([id], 2, 'postcode-mail', { ...env, MAIL_MAX_ATTEMPTS: '2' });
    expect(await inbox(now)).toHaveLength(1);
    email = await detail(mailKey, id);
    expect(email).toMatchObject({ status: 'SENT', attempts: 2 });
    expect(email.recipients[1]).toMatchObject({ status: 'FAILED', reply: expect.stringMatching(/^451/) });
    const list = await call<SuppressionList>('GET', '/api/v1/suppressions', { token: mailKey });
    expect(list.json.data.total).toBe(0);
  });

  it('every recipient refused with 550: FAILED, nothing sent, each suppressed', async () => {
    const { accountId, mailKey } = await newAccount();
    const id = await storedEmail(accountId, [uniqueAddress('reject550'), uniqueAddress('reject550')]);
    await runBatch([id]);
    expect(await findEmail(accountId, id)).toMatchObject({ status: 'FAILED', attempts: 1 });
    const list = await call<SuppressionList>('GET', '/api/v1/suppressions', { token: mailKey });
    expect(list.json.data.total).toBe(2);
  });

  it("one account's suppression never skips another account's mail", async () => {
    const first = await newAccount();
    const second = await newAccount();
    const to = uniqueAddress('shared');
    expect((await call('POST', '/api/v1/suppressions', { token: first.mailKey, body: { email: to } })).status).toBe(
      201,
    );
    const id = await storedEmail(second.accountId, to);
    await runBatch([id]);
    expect(await findEmail(second.accountId, id)).toMatchObject({ status: 'SENT' });
    expect(await inbox(to)).toHaveLength(1);
  });
});

async function waitForFinal(mailKey: string, id: string): Promise<EmailDetail> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const email = await detail(mailKey, id);
    if (email.status !== 'QUEUED') return email;
    if (Date.now() > deadline) throw new Error(`email ${id} still QUEUED`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
