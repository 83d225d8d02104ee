// Cloudflare Email Service's lifecycle events on the `postcode-email-events` queue, in the payload Cloudflare's
// "Event subscriptions" page documents for Email Sending, applied to mail sent through the `cloudflare` route.
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { accountStore } from '../../src/store/account/client';
import { noteProviderIds } from '../../src/store/directory';
import { accountDb } from '../support/account-db';
import { call, newAccount, uniqueAddress } from '../support/api';
import { runBatch, storedEmail } from '../support/delivery';
import type { EmailDetail, SuppressionList } from '../support/responses';
import { newWebhook, waitForEvents } from '../support/webhooks';

const CF_ENV: Cloudflare.Env = { ...env, MAIL_ROUTES: JSON.stringify([{ name: 'cf', kind: 'cloudflare' }]) };

type Kind = 'delivered' | 'deferred' | 'bounced' | 'failed' | 'rejected' | 'complained';

/** One event as the subscription publishes it (fields as the documentation's examples name them). */
function cloudflareEvent(kind: Kind, messageId: string, recipient: string, more: Record<string, unknown> = {}) {
  const delivery: Record<Kind, object> = {
    delivered: {
      status: 'delivered',
      provider: 'gmail',
      deliveryTimeMs: 1234,
      smtpStatusCode: '250',
      smtpEnhancedStatusCode: '2.0.0',
      smtpResponse: '250 2.0.0 OK 1714820445 a1b2c3 - gsmtp',
    },
    deferred: {
      status: 'deferred',
      provider: 'external_smtp',
      deliveryTimeMs: 2143,
      smtpStatusCode: '451',
      smtpEnhancedStatusCode: '4.2.0',
      smtpResponse: '451 4.2.0 Temporary mailbox error',
    },
    bounced: {
      status: 'bounced',
      provider: 'external_smtp',
      deliveryTimeMs: 2143,
      smtpStatusCode: '550',
      smtpEnhancedStatusCode: '5.1.1',
      smtpResponse: '550 5.1.1 User unknown',
    },
    failed: { status: 'failed' },
    rejected: { status: 'rejected' },
    complained: { status: 'complained' },
  };
  const details: Record<Kind, object> = {
    delivered: {},
    deferred: {
      bounce: { type: 'soft', classification: 'temporary_failure', reason: '451 4.2.0 Temporary mailbox error' },
    },
    bounced: { bounce: { type: 'hard', classification: 'permanent_failure', reason: '550 5.1.1 User unknown' } },
    failed: { failure: { reason: 'delivery_failed' } },
    rejected: { rejection: { reason: 'suppressed', party: 'recipient', detail: 'Recipient is suppressed' } },
    complained: { complaint: { type: 'abuse' } },
  };
  return {
    type: `cf.email.sending.message.${kind}`,
    source: { type: 'email.sending', zoneId: '023e105f4ecef8ad9ca31a8372d0c353', domain: 'postcode.dev' },
    payload: {
      eventId: crypto.randomUUID(),
      messageId,
      sender: 'no-reply@postcode.dev',
      recipient,
      ...(kind === 'complained' ? {} : { subject: 'Your receipt' }),
      terminal: kind !== 'deferred',
      delivery: delivery[kind],
      ...details[kind],
      ...more,
    },
    metadata: {
      accountId: 'f9f79265f388666de8122cfb508d7776',
      eventSubscriptionId: '1830c4bb612e43c3af7f4cada31fbf3f',
      eventSchemaVersion: 1,
      eventTimestamp: new Date().toISOString(),
    },
  };
}

async function consume(bodies: unknown[]) {
  const batch = createMessageBatch<unknown>(
    'postcode-email-events',
    bodies.map((body, i) => ({ id: `event-${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch<never>, CF_ENV);
  return getQueueResult(batch, ctx);
}

/** An email sent through the simulated binding to `to`: its id and the binding's message id. */
async function sentThroughCloudflare(to: string[]) {
  const account = await newAccount();
  const id = await storedEmail(account.accountId, to);
  await runBatch([id], 1, 'postcode-mail', CF_ENV);
  const row = await accountDb(account.accountId)
    .prepare('SELECT provider_id FROM email_recipients WHERE email_id = ? AND position = 0')
    .bind(id)
    .first<{ provider_id: string }>();
  return { ...account, id, providerId: row!.provider_id };
}

const detailOf = async (mailKey: string, id: string) =>
  (await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey })).json.data;

describe('queue postcode-email-events: Cloudflare Email Service events', () => {
  it('delivered → DELIVERED (every recipient: the email too), with email.delivered naming the route', async () => {
    const to = [uniqueAddress('cf-a'), uniqueAddress('cf-b')];
    const sent = await sentThroughCloudflare(to);
    const { key } = await newWebhook(sent.mailKey, ['email.delivered']);
    const first = await consume([cloudflareEvent('delivered', sent.providerId, to[0]!)]);
    expect(first.explicitAcks).toEqual(['event-0']);
    expect((await detailOf(sent.mailKey, sent.id)).status).toBe('SENT');
    await consume([cloudflareEvent('delivered', sent.providerId, to[1]!)]);
    const detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.status).toBe('DELIVERED');
    expect(detail.recipients.map((r) => [r.status, r.route])).toEqual([
      ['DELIVERED', 'cf'],
      ['DELIVERED', 'cf'],
    ]);
    const events = await waitForEvents(key, ['email.delivered']);
    expect(events[0]!.payload.data).toMatchObject({ route: 'cf', diagnostic: expect.stringMatching(/^250/) });
  });

  it('bounced (hard) → BOUNCED and suppressed; a late delivered changes nothing', async () => {
    const to = uniqueAddress('cf-bounce');
    const sent = await sentThroughCloudflare([to]);
    await consume([cloudflareEvent('bounced', sent.providerId, to)]);
    await consume([cloudflareEvent('delivered', sent.providerId, to)]);
    const detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.status).toBe('BOUNCED');
    expect(detail.recipients[0]).toMatchObject({
      status: 'BOUNCED',
      bounceType: 'hard',
      reply: '550 5.1.1 User unknown',
    });
    const list = await call<SuppressionList>('GET', '/api/v1/suppressions', { token: sent.mailKey });
    expect(list.json.data.suppressions).toMatchObject([{ email: to, reason: 'hard_bounce', emailId: sent.id }]);
  });

  it('bounced "hard" for a full mailbox → BOUNCED soft with its reason, never suppressed', async () => {
    const to = uniqueAddress('cf-full');
    const sent = await sentThroughCloudflare([to]);
    const reason = '552 5.2.2 The email account that you tried to reach is over quota';
    await consume([cloudflareEvent('bounced', sent.providerId, to, { bounce: { type: 'hard', reason } })]);
    expect((await detailOf(sent.mailKey, sent.id)).recipients[0]).toMatchObject({
      status: 'BOUNCED',
      bounceType: 'soft',
      bounceReason: 'mailbox_full',
    });
    const list = await call<SuppressionList>('GET', '/api/v1/suppressions', { token: sent.mailKey });
    expect(list.json.data.suppressions).toEqual([]);
  });

  it('deferred keeps SENT; complained → COMPLAINED, suppressed for good; rejected (suppressed) and failed', async () => {
    const to = [uniqueAddress('cf-def'), uniqueAddress('cf-rej'), uniqueAddress('cf-fail')];
    const sent = await sentThroughCloudflare(to);
    await consume([
      cloudflareEvent('deferred', sent.providerId, to[0]!),
      cloudflareEvent('rejected', sent.providerId, to[1]!),
      cloudflareEvent('failed', sent.providerId, to[2]!),
    ]);
    let detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.recipients.map((r) => r.status)).toEqual(['SENT', 'SUPPRESSED', 'FAILED']);
    expect(detail.events.map((e) => e.type)).toEqual(expect.arrayContaining(['deferred', 'suppressed', 'failed']));
    await consume([cloudflareEvent('complained', sent.providerId, to[0]!)]);
    detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.recipients[0]!.status).toBe('COMPLAINED');
    const list = await call<SuppressionList>('GET', '/api/v1/suppressions', { token: sent.mailKey });
    expect(list.json.data.suppressions).toMatchObject([{ email: to[0], reason: 'complaint', expiresAt: null }]);
  });

  it('an event for a message id not stored (yet) is retried; one that is no Email Sending event is dropped', async () => {
    const result = await consume([
      cloudflareEvent('delivered', '<unknown-message@postcode.dev>', 'someone@example.com'),
      { type: 'cf.workers.something', payload: {} },
      'not json at all',
    ]);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(['event-0']);
    expect(result.explicitAcks.sort()).toEqual(['event-1', 'event-2']);
  });

  it('an event that overtakes the stored answer is applied on its retry', async () => {
    const { accountId, mailKey } = await newAccount();
    const to = uniqueAddress('cf-early');
    const id = await storedEmail(accountId, to);
    const providerId = `<early-${crypto.randomUUID()}@postcode.dev>`;
    const early = cloudflareEvent('delivered', providerId, to);
    expect((await consume([early])).retryMessages).toHaveLength(1);
    // The answer is stored now (as the consumer stores the binding's message id: on the recipient in the
    // account's object, and in the provider index that leads an event to the account).
    await runBatch([id], 1, 'postcode-mail', CF_ENV);
    await accountDb(accountId)
      .prepare('UPDATE email_recipients SET provider_id = ? WHERE email_id = ?')
      .bind(providerId, id)
      .run();
    await noteProviderIds(env, accountId, [providerId]);
    expect((await consume([early])).explicitAcks).toEqual(['event-0']);
    expect((await accountStore(env, accountId).findEmail(id))!.status).toBe('DELIVERED');
    expect((await detailOf(mailKey, id)).recipients[0]!.status).toBe('DELIVERED');
  });
});
