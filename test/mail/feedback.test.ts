// Bounces and complaints mailed back to postcode, through the Worker's email() handler: what each does to the
// recipient, the email, the suppression list and a real webhook receiver.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { newEmailId } from '../../src/ids';
import worker from '../../src/index';
import type { DeliveryEvent } from '../../src/mail/delivery-events';
import { applyDeliveryEvent } from '../../src/mail/feedback';
import { returnPathAddress } from '../../src/mail/return-path';
import { accountStore } from '../../src/store/account/client';
import { accountDb } from '../support/account-db';
import { call, eventually, newAccount, uniqueAddress } from '../support/api';
import { runBatch, storedEmail } from '../support/delivery';
import {
  abuseReport,
  autoReply,
  eximBounce,
  gmailBounce,
  inboundMessage,
  microsoftBounce,
  postfixBounce,
  type ReportFixture,
  yahooBounce,
} from '../support/reports';
import type { EmailDetail, SuppressionList } from '../support/responses';
import { newWebhook, receivedAt, waitForEvents } from '../support/webhooks';

const RETURN_PATH_DOMAIN = 'pc-bounces.example.com';
const DAY_MS = 86_400_000;

const returnPath = (emailId: string) => returnPathAddress(env.DKIM_KEY_SECRET, emailId, RETURN_PATH_DOMAIN);

async function receive(fixture: ReportFixture, bindings: Cloudflare.Env = env) {
  const { message, state } = inboundMessage(fixture);
  await worker.email(message, bindings);
  return state;
}

/** An account with a webhook endpoint and one email SENT to `to` (one recipient unless more are given). */
async function sentEmail(to: string | string[], fields: { test?: boolean } = {}) {
  const account = await newAccount();
  const hook = await newWebhook(account.mailKey, [
    'email.bounced',
    'email.complained',
    'email.deferred',
    'suppression.added',
  ]);
  const id = await storedEmail(account.accountId, to, fields);
  await runBatch([id]);
  expect(await accountStore(env, account.accountId).findEmail(id)).toMatchObject({ status: 'SENT' });
  return { ...account, id, hook: hook.key, messageId: `<${id}@postcode.dev>` };
}

const detailOf = async (mailKey: string, id: string) =>
  (await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey })).json.data;
const suppressionsOf = async (mailKey: string) =>
  (await call<SuppressionList>('GET', '/api/v1/suppressions', { token: mailKey })).json.data.suppressions;

describe('email(): delivery status notifications at the return path', () => {
  it('a hard bounce: BOUNCED (hard, the diagnostic), the email BOUNCED, suppressed 30 days, webhooks', async () => {
    const to = uniqueAddress('hard');
    const sent = await sentEmail(to);
    const state = await receive(postfixBounce({ to: await returnPath(sent.id), recipient: to }));
    expect(state.rejected).toBeNull();
    const detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.status).toBe('BOUNCED');
    expect(detail.recipients).toEqual([
      {
        email: to,
        kind: 'to',
        status: 'BOUNCED',
        bounceType: 'hard',
        bounceReason: expect.any(String),
        route: 'smtp',
        reply: expect.stringMatching(/^550 5\.1\.1/),
      },
    ]);
    expect(detail.events.at(-1)).toMatchObject({ type: 'bounced', route: 'smtp', detail: expect.stringContaining(to) });
    const [entry] = await suppressionsOf(sent.mailKey);
    expect(entry).toMatchObject({
      email: to,
      reason: 'hard_bounce',
      emailId: sent.id,
      note: expect.stringMatching(/^550/),
    });
    expect(Math.abs(Date.parse(entry!.expiresAt!) - (Date.now() + 30 * DAY_MS))).toBeLessThan(60_000);
    const events = await waitForEvents(sent.hook, ['email.bounced', 'suppression.added']);
    const bounced = events.find((e) => e.payload.type === 'email.bounced')!;
    expect(bounced.signatureValid).toBe(true);
    expect(bounced.payload.data).toMatchObject({
      emailId: sent.id,
      status: 'BOUNCED',
      recipient: to,
      route: 'smtp',
      bounceType: 'hard',
      diagnostic: expect.stringMatching(/^550/),
      test: false,
    });
    expect(events.find((e) => e.payload.type === 'suppression.added')!.payload.data).toEqual({
      email: to,
      reason: 'hard_bounce',
      emailId: sent.id,
      expiresAt: entry!.expiresAt,
    });
    // The send log filters by the new status, and its entries keep the contract's five fields.
    const log = await call<{ emails: Record<string, unknown>[] }>('GET', '/api/v1/emails?status=BOUNCED', {
      token: sent.mailKey,
    });
    expect(log.json.data.emails).toEqual([
      { id: sent.id, subject: expect.any(String), toAddresses: [to], status: 'BOUNCED', createdAt: expect.any(String) },
    ]);
    const none = await call<{ emails: unknown[] }>('GET', '/api/v1/emails?status=SENT', { token: sent.mailKey });
    expect(none.json.data.emails).toEqual([]);
    // The next mail to that address is skipped.
    const next = await storedEmail(sent.accountId, to);
    await runBatch([next]);
    expect(await accountStore(env, sent.accountId).findEmail(next)).toMatchObject({ status: 'SUPPRESSED' });
  });

  it.each([
    ['Exim', eximBounce],
    ['Gmail', gmailBounce],
    ['Microsoft', microsoftBounce],
    ['Yahoo', yahooBounce],
  ])('%s’s bounce layout: the recipient BOUNCED hard', async (_, make) => {
    const to = uniqueAddress('layout');
    const sent = await sentEmail(to);
    await receive(make({ to: await returnPath(sent.id), recipient: to }));
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({
      status: 'BOUNCED',
      bounceType: 'hard',
    });
  });

  it('forwarded from a verified domain’s return path to RETURN_PATH_DOMAIN, the token still names the email', async () => {
    const to = uniqueAddress('forwarded');
    const sent = await sentEmail(to);
    const local = (await returnPath(sent.id)).split('@')[0];
    const bindings = { ...env, RETURN_PATH_DOMAIN: 'bounces.postcode.test' };
    const state = await receive(postfixBounce({ to: `${local}@bounces.postcode.test`, recipient: to }), bindings);
    expect(state.rejected).toBeNull();
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({ status: 'BOUNCED' });
  });

  it('a soft bounce: BOUNCED soft, not suppressed; a hard one later makes it hard and suppresses', async () => {
    const to = uniqueAddress('soft');
    const sent = await sentEmail(to);
    const rp = await returnPath(sent.id);
    await receive(
      postfixBounce({ to: rp, recipient: to, status: '4.4.7', diagnostic: '450 4.4.7 Message expired in queue' }),
    );
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({
      status: 'BOUNCED',
      bounceType: 'soft',
    });
    expect(await suppressionsOf(sent.mailKey)).toEqual([]);
    await receive(postfixBounce({ to: rp, recipient: to }));
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({
      status: 'BOUNCED',
      bounceType: 'hard',
    });
    expect((await suppressionsOf(sent.mailKey)).map((s) => s.reason)).toEqual(['hard_bounce']);
  });

  it('a delayed notice: still SENT, the timeline and email.deferred say so', async () => {
    const to = uniqueAddress('delayed');
    const sent = await sentEmail(to);
    await receive(
      postfixBounce({
        to: await returnPath(sent.id),
        recipient: to,
        action: 'delayed',
        status: '4.4.1',
        diagnostic: '421 4.4.1 Connection timed out',
      }),
    );
    const detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.status).toBe('SENT');
    expect(detail.recipients[0]!.status).toBe('SENT');
    expect(detail.events.at(-1)).toMatchObject({ type: 'deferred', detail: expect.stringContaining('421 4.4.1') });
    const [deferred] = await waitForEvents(sent.hook, ['email.deferred']);
    expect(deferred!.payload.data).toMatchObject({
      recipient: to,
      status: 'SENT',
      diagnostic: '421 4.4.1 Connection timed out',
    });
  });

  it('one bounced, one sent: the email stays SENT', async () => {
    const [gone, fine] = [uniqueAddress('gone'), uniqueAddress('fine')];
    const sent = await sentEmail([gone, fine]);
    await receive(gmailBounce({ to: await returnPath(sent.id), recipient: gone }));
    const detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.recipients.map((r) => r.status)).toEqual(['BOUNCED', 'SENT']);
    expect(detail.status).toBe('SENT');
  });

  it('the same DSN twice: applied once (one timeline entry, one webhook)', async () => {
    const to = uniqueAddress('twice');
    const sent = await sentEmail(to);
    const fixture = postfixBounce({ to: await returnPath(sent.id), recipient: to });
    await Promise.all([receive(fixture), receive(fixture)]);
    await receive(fixture);
    const detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.events.filter((e) => e.type === 'bounced')).toHaveLength(1);
    await waitForEvents(sent.hook, ['email.bounced']);
    await new Promise((r) => setTimeout(r, 500));
    expect((await receivedAt(sent.hook)).filter((e) => e.payload.type === 'email.bounced')).toHaveLength(1);
  });

  it('a DSN before the send is recorded waits on the event queue and is applied once it is', async () => {
    const { accountId, mailKey } = await newAccount();
    const to = uniqueAddress('early');
    const id = await storedEmail(accountId, to);
    await receive(postfixBounce({ to: await returnPath(id), recipient: to }));
    expect((await detailOf(mailKey, id)).recipients[0]!.status).toBe('QUEUED');
    await runBatch([id]);
    await eventually(
      async () => ((await detailOf(mailKey, id)).status === 'BOUNCED' ? true : undefined),
      'the early bounce applied',
      28_000,
    );
  }, 35_000);

  it('a test key’s mail: BOUNCED, but never suppressed', async () => {
    const to = uniqueAddress('testmode');
    const sent = await sentEmail(to, { test: true });
    await receive(postfixBounce({ to: await returnPath(sent.id), recipient: to }));
    expect((await accountStore(env, sent.accountId).findEmail(sent.id))!.status).toBe('BOUNCED');
    const listed = await accountDb(sent.accountId)
      .prepare('SELECT COUNT(*) AS n FROM suppressions WHERE account_id = ?')
      .bind(sent.accountId)
      .first<{ n: number }>();
    expect(listed!.n).toBe(0);
  });
});

describe('email(): complaints (feedback reports)', () => {
  it('at the feedback-loop address, matched by the returned Message-ID: COMPLAINED, suppressed for good', async () => {
    const to = uniqueAddress('complains');
    const sent = await sentEmail(to);
    await receive(abuseReport({ to: `fbl@${RETURN_PATH_DOMAIN}`, recipient: to, messageId: sent.messageId }));
    const detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.recipients[0]).toMatchObject({ status: 'COMPLAINED' });
    // A complaint means the mail was delivered: the email as a whole is DELIVERED.
    expect(detail.status).toBe('DELIVERED');
    const log = await call<{ emails: { id: string }[] }>('GET', '/api/v1/emails?status=DELIVERED', {
      token: sent.mailKey,
    });
    expect(log.json.data.emails.map((e) => e.id)).toEqual([sent.id]);
    expect(await suppressionsOf(sent.mailKey)).toMatchObject([
      { email: to, reason: 'complaint', expiresAt: null, emailId: sent.id },
    ]);
    const [complained] = await waitForEvents(sent.hook, ['email.complained']);
    expect(complained!.payload.data).toMatchObject({ recipient: to, status: 'DELIVERED', route: 'smtp' });
    // Nothing downgrades it: a bounce arriving later changes nothing.
    await receive(postfixBounce({ to: await returnPath(sent.id), recipient: to }));
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]!.status).toBe('COMPLAINED');
  });

  it('at the return path too (the token names the email)', async () => {
    const to = uniqueAddress('complains-rp');
    const sent = await sentEmail(to);
    await receive(abuseReport({ to: await returnPath(sent.id), recipient: to, messageId: null }));
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]!.status).toBe('COMPLAINED');
  });
});

describe('email(): what is not a report for postcode', () => {
  it('a token whose MAC does not verify changes nothing and is not answered', async () => {
    const to = uniqueAddress('forged');
    const sent = await sentEmail(to);
    const real = await returnPath(sent.id);
    const forged = real.replace(
      /-([a-z2-7]{16})@/,
      (_, mac: string) => `-${mac.startsWith('a') ? 'b' : 'a'}${mac.slice(1)}@`,
    );
    expect(forged).not.toBe(real);
    const state = await receive(postfixBounce({ to: forged, recipient: to, messageId: sent.messageId }));
    expect(state.rejected).toBeNull();
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]!.status).toBe('SENT');
    expect(await suppressionsOf(sent.mailKey)).toEqual([]);
  });

  it('mail to any other address of the domain, or for a domain that is no return path, is rejected (setReject)', async () => {
    const state = await receive(autoReply(`postmaster@${RETURN_PATH_DOMAIN}`));
    expect(state.rejected).toMatch(/No such mailbox/);
    // A valid token at a domain postcode does not use as a return path: refused, nothing changes.
    const to = uniqueAddress('elsewhere');
    const sent = await sentEmail(to);
    const token = (await returnPath(sent.id)).split('@')[0];
    const elsewhere = await receive(postfixBounce({ to: `${token}@unknown.example`, recipient: to }));
    expect(elsewhere.rejected).toMatch(/No such mailbox/);
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]!.status).toBe('SENT');
  });

  it('an auto-reply at the return path, and a report for an unknown email, change nothing', async () => {
    const to = uniqueAddress('autoreply');
    const sent = await sentEmail(to);
    expect((await receive(autoReply(await returnPath(sent.id)))).rejected).toBeNull();
    await receive(
      abuseReport({
        to: `fbl@${RETURN_PATH_DOMAIN}`,
        recipient: to,
        messageId: `<${newEmailId(sent.accountId)}@postcode.dev>`,
      }),
    );
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]!.status).toBe('SENT');
  });
});

describe('applyDeliveryEvent(): a bounce’s type and reason', () => {
  /** A bounce report about `to` of the email, as a parser hands it over. */
  const bounce = (id: string, to: string, fields: Partial<DeliveryEvent> = {}): DeliveryEvent => ({
    target: { emailId: id },
    recipient: to,
    kind: 'bounced',
    diagnostic: null,
    route: null,
    ...fields,
  });
  /** The webhook events received once `email.bounced` has come, and a little longer for any other. */
  const settledEvents = async (hook: string) => {
    await waitForEvents(hook, ['email.bounced']);
    await new Promise((r) => setTimeout(r, 500));
    return receivedAt(hook);
  };

  it('a soft bounce for a full mailbox: BOUNCED soft with its reason, never suppressed, the webhook says both', async () => {
    const to = uniqueAddress('full');
    const sent = await sentEmail(to);
    const diagnostic = '452 4.2.2 Mailbox full';
    expect(await applyDeliveryEvent(env, bounce(sent.id, to, { bounceReason: 'mailbox_full', diagnostic }))).toBe(
      'applied',
    );
    const detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.status).toBe('BOUNCED');
    expect(detail.recipients).toEqual([
      {
        email: to,
        kind: 'to',
        status: 'BOUNCED',
        bounceType: 'soft',
        bounceReason: 'mailbox_full',
        route: 'smtp',
        reply: diagnostic,
      },
    ]);
    expect(await suppressionsOf(sent.mailKey)).toEqual([]);
    const events = await settledEvents(sent.hook);
    expect(events.map((e) => e.payload.type)).toEqual(['email.bounced']);
    expect(events[0]!.payload.data).toMatchObject({
      recipient: to,
      status: 'BOUNCED',
      bounceType: 'soft',
      bounceReason: 'mailbox_full',
      diagnostic,
    });
    // The next mail to that address goes out.
    const next = await storedEmail(sent.accountId, to);
    await runBatch([next]);
    expect(await accountStore(env, sent.accountId).findEmail(next)).toMatchObject({ status: 'SENT' });
  });

  it('a hard bounce for an unknown user: suppressed, the webhooks carry the reason, suppression.added as it was', async () => {
    const to = uniqueAddress('unknown');
    const sent = await sentEmail(to);
    await applyDeliveryEvent(env, bounce(sent.id, to, { bounceReason: 'user_unknown', diagnostic: '550 5.1.1 No' }));
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({
      status: 'BOUNCED',
      bounceType: 'hard',
      bounceReason: 'user_unknown',
    });
    const [entry] = await suppressionsOf(sent.mailKey);
    expect(entry).toMatchObject({ email: to, reason: 'hard_bounce', emailId: sent.id });
    const events = await waitForEvents(sent.hook, ['email.bounced', 'suppression.added']);
    expect(events.find((e) => e.payload.type === 'email.bounced')!.payload.data).toMatchObject({
      bounceType: 'hard',
      bounceReason: 'user_unknown',
    });
    expect(events.find((e) => e.payload.type === 'suppression.added')!.payload.data).toEqual({
      email: to,
      reason: 'hard_bounce',
      emailId: sent.id,
      expiresAt: entry!.expiresAt,
    });
  });

  it('a bounce that names no reason and no type: undetermined, never suppressed', async () => {
    const to = uniqueAddress('unsure');
    const sent = await sentEmail(to);
    await applyDeliveryEvent(env, bounce(sent.id, to));
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({
      status: 'BOUNCED',
      bounceType: 'undetermined',
      bounceReason: 'undetermined',
    });
    expect(await suppressionsOf(sent.mailKey)).toEqual([]);
    const [bounced] = (await settledEvents(sent.hook)).map((e) => e.payload);
    expect(bounced).toMatchObject({
      type: 'email.bounced',
      data: { bounceType: 'undetermined', bounceReason: 'undetermined' },
    });
  });

  it('a type the report gives wins over its reason’s; a later hard bounce upgrades, nothing downgrades it', async () => {
    const to = uniqueAddress('upgrade');
    const sent = await sentEmail(to);
    // A report that says soft for a reason that would be hard is taken at its word: not suppressed.
    await applyDeliveryEvent(env, bounce(sent.id, to, { bounceType: 'soft', bounceReason: 'user_unknown' }));
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({
      bounceType: 'soft',
      bounceReason: 'user_unknown',
    });
    expect(await suppressionsOf(sent.mailKey)).toEqual([]);
    expect(await applyDeliveryEvent(env, bounce(sent.id, to, { bounceReason: 'host_unknown' }))).toBe('applied');
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({
      bounceType: 'hard',
      bounceReason: 'host_unknown',
    });
    expect((await suppressionsOf(sent.mailKey)).map((e) => e.reason)).toEqual(['hard_bounce']);
    for (const later of ['mailbox_full', 'user_unknown', 'undetermined'] as const) {
      expect(await applyDeliveryEvent(env, bounce(sent.id, to, { bounceReason: later }))).toBe('ignored');
    }
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({ bounceReason: 'host_unknown' });
  });
});
