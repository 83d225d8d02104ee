// Events reach a real receiver, signed (Standard Webhooks, verified with the `standardwebhooks` library),
// through the real queue: email and OTP events, retries with a stable webhook-id, secret rotation,
// disabling, the recovery by the account's alarm. Ordering is never assumed.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { accountObject } from '../../src/store/account/client';
import { accountDb } from '../support/account-db';
import { call, codeFromInbox, eventually, newAccount, uniqueAddress } from '../support/api';
import type { OtpSent, QueuedEmail } from '../support/responses';
import {
  controlReceiver,
  newWebhook,
  type Received,
  receivedAt,
  type Webhook,
  type WebhookDelivery,
  waitForEvents,
} from '../support/webhooks';

const EMAIL_EVENTS = ['email.queued', 'email.sent', 'email.deferred', 'email.failed', 'email.suppressed'];
const OTP_EVENTS = ['otp.sent', 'otp.verified', 'otp.locked', 'email_verification.verified'];
const ofType = (received: Received[], type: string) => received.filter((r) => r.payload.type === type);
/** What the account's alarm does at its time, now: pending deliveries overdue by the grace are queued again. */
const alarm = (accountId: string) => accountObject(env, accountId).wake();

describe('email events', () => {
  it('email.queued and email.sent arrive signed, per recipient, with the email’s facts', async () => {
    const { mailKey } = await newAccount();
    const { key } = await newWebhook(mailKey, EMAIL_EVENTS);
    const to = [uniqueAddress('hook'), uniqueAddress('reject550')];
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 'Hooked', text: 'x' },
    });
    const received = await waitForEvents(key, ['email.queued', 'email.sent', 'email.failed']);
    for (const r of received) expect(r.signatureValid, r.raw).toBe(true);
    expect(ofType(received, 'email.queued')[0]!.payload).toEqual({
      type: 'email.queued',
      createdAt: expect.any(String),
      data: { emailId: res.json.data.id, to, subject: 'Hooked', status: 'QUEUED', tags: [], test: false },
    });
    expect(ofType(received, 'email.sent')[0]!.payload.data).toMatchObject({ recipient: to[0], status: 'SENT' });
    expect(ofType(received, 'email.failed')[0]!.payload.data).toMatchObject({
      recipient: to[1],
      reply: expect.stringMatching(/^550/),
    });
  });

  it('a failing endpoint is retried and then succeeds with the same webhook-id', async () => {
    const { mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.queued']);
    await controlReceiver(key, { failFirst: 1 });
    await call('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: uniqueAddress('retry'), subject: 's', text: 'x' },
    });
    const received = await eventually(
      async () => {
        const all = await receivedAt(key);
        return all.some((r) => r.answered === 204) ? all : undefined;
      },
      'the retried delivery',
      20_000,
    );
    expect(received.map((r) => r.answered)).toEqual([500, 204]);
    expect(received[1]!.webhookId).toBe(received[0]!.webhookId);
    const log = await call<{ deliveries: WebhookDelivery[] }>('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, {
      token: mailKey,
    });
    expect(log.json.data.deliveries[0]).toMatchObject({
      id: received[0]!.webhookId,
      status: 'delivered',
      attempts: 2,
      lastStatus: 204,
    });
  });

  it('after the secret rotates, deliveries verify with the new secret only', async () => {
    const { mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.queued']);
    const rotated = await call<Webhook>('PATCH', `/api/v1/webhooks/${webhook.id}`, {
      token: mailKey,
      body: { rotateSecret: true },
    });
    expect(rotated.json.data.secret).toMatch(/^whsec_/);
    expect(rotated.json.data.secret).not.toBe(webhook.secret);
    await call('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: uniqueAddress('rot'), subject: 's', text: 'x' },
    });
    const [delivery] = await waitForEvents(key, ['email.queued']);
    expect(delivery!.signatureValid).toBe(false); // the receiver still only knows the old secret
    await controlReceiver(key, { secrets: [rotated.json.data.secret!] });
    await call('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: mailKey });
    const received = await waitForEvents(key, ['webhook.test']);
    expect(ofType(received, 'webhook.test')[0]!.signatureValid).toBe(true);
  });
});

describe('OTP events', () => {
  it('otp.sent, otp.verified and otp.locked arrive, and no payload carries a code', async () => {
    const { serverKey } = await newAccount();
    const { key } = await newWebhook(serverKey, OTP_EVENTS);
    const email = uniqueAddress('otp-hook');
    const sent = await call<OtpSent>('POST', '/api/v1/backend-otp/send', { token: serverKey, body: { email } });
    const code = await codeFromInbox(email);
    await call('POST', '/api/v1/backend-otp/verify', {
      token: serverKey,
      body: { sessionId: sent.json.data.sessionId, email, code },
    });
    const locked = await call<OtpSent>('POST', '/api/v1/backend-otp/send', { token: serverKey, body: { email } });
    const lockedCode = await codeFromInbox(email, 6, 2);
    const wrong = lockedCode.replace(/.$/, (d) => String((Number(d) + 1) % 10));
    for (let i = 0; i < 5; i++) {
      await call('POST', '/api/v1/backend-otp/verify', {
        token: serverKey,
        body: { sessionId: locked.json.data.sessionId, email, code: wrong },
      });
    }
    const received = await waitForEvents(key, ['otp.sent', 'otp.verified', 'otp.locked']);
    expect(ofType(received, 'otp.verified')[0]!.payload.data).toEqual({
      sessionId: sent.json.data.sessionId,
      email,
      channel: 'backend',
    });
    expect(ofType(received, 'otp.locked')[0]!.payload.data.sessionId).toBe(locked.json.data.sessionId);
    for (const r of received) {
      expect(r.signatureValid).toBe(true);
      expect(r.raw).not.toContain(code);
      expect(r.raw).not.toContain(lockedCode);
    }
  });

  it('an endpoint created or changed after a send found no subscriber gets the next otp.sent (the isolate forgets)', async () => {
    const { accountId, serverKey } = await newAccount();
    const send = async () => {
      const email = uniqueAddress('subs');
      const res = await call<OtpSent>('POST', '/api/v1/backend-otp/send', { token: serverKey, body: { email } });
      expect(res.json.data.sent).toBe(true);
      return res.json.data.sessionId;
    };
    await send(); // no endpoint yet: the account's subscriptions (none) are kept in the isolate
    const { key, webhook } = await newWebhook(serverKey, ['otp.verified']);
    const unsubscribed = await send();
    await call('PATCH', `/api/v1/webhooks/${webhook.id}`, { token: serverKey, body: { events: ['otp.sent'] } });
    const subscribed = await send();
    const received = await waitForEvents(key, ['otp.sent']);
    expect(ofType(received, 'otp.sent').map((r) => r.payload.data.sessionId)).toEqual([subscribed]);
    const rows = await accountDb(accountId)
      .prepare('SELECT data FROM webhook_deliveries WHERE endpoint_id = ?')
      .bind(webhook.id)
      .all<{ data: string }>();
    expect(rows.results.map((r) => JSON.parse(r.data).sessionId)).toEqual([subscribed]);
    expect(JSON.stringify(rows.results)).not.toContain(unsubscribed);
  });

  it('email_verification.verified arrives when the hosted page verifies', async () => {
    const { serverKey } = await newAccount();
    const { key } = await newWebhook(serverKey, ['email_verification.verified']);
    const email = uniqueAddress('hosted-hook');
    const sent = await call<OtpSent>('POST', '/api/v1/email-verification/send', { token: serverKey, body: { email } });
    const code = await codeFromInbox(email);
    const page = await call('POST', '/verify', {
      rawBody: new URLSearchParams({ sessionId: sent.json.data.sessionId, email, code }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(page.status).toBe(200);
    const [event] = await waitForEvents(key, ['email_verification.verified']);
    expect(event!.payload.data).toEqual({ sessionId: sent.json.data.sessionId, email, channel: 'email_verification' });
  });
});

describe('endpoint health and recovery', () => {
  it('an endpoint that has failed every delivery for WEBHOOK_DISABLE_AFTER_DAYS is disabled, with the reason', async () => {
    const { accountId, mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.queued']);
    await controlReceiver(key, { mode: '500' });
    const longAgo = new Date(Date.now() - 6 * 86_400_000).toISOString();
    await accountDb(accountId)
      .prepare('UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?')
      .bind(longAgo, webhook.id)
      .run();
    await call('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: mailKey });
    const disabled = await eventually(async () => {
      const res = await call<Webhook>('GET', `/api/v1/webhooks/${webhook.id}`, { token: mailKey });
      return res.json.data.enabled ? undefined : res.json.data;
    }, 'the endpoint to be disabled');
    expect(disabled.disabledReason).toMatch(/failed since/);
    // Enabling it again clears the record.
    const enabled = await call<Webhook>('PATCH', `/api/v1/webhooks/${webhook.id}`, {
      token: mailKey,
      body: { enabled: true },
    });
    expect(enabled.json.data).toMatchObject({ enabled: true });
    expect(enabled.json.data.disabledReason).toBeUndefined();
  });

  it("a pending delivery whose queue message was lost is queued again by the account's alarm", async () => {
    const { accountId, mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.queued']);
    // Recorded in the account's object but never queued: as after a crash between the fact and the queue send.
    const ago = Date.now() - 120_000;
    await accountDb(accountId)
      .prepare(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, data, due_at, created_at, updated_at)
         VALUES ('msg_lostinthecrash', ?, 'email.queued', '{}', ?, ?, ?)`,
      )
      .bind(webhook.id, ago, ago, ago)
      .run();
    await alarm(accountId);
    const [delivery] = await waitForEvents(key, ['email.queued']);
    expect(delivery).toMatchObject({ webhookId: 'msg_lostinthecrash', signatureValid: true });
  });

  it("a disabled endpoint's pending deliveries wait; enabled again, the account's alarm delivers them", async () => {
    const { accountId, mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.queued']);
    await call('PATCH', `/api/v1/webhooks/${webhook.id}`, { token: mailKey, body: { enabled: false } });
    const test = await call<WebhookDelivery>('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: mailKey });
    const overdue = Date.now() - 120_000;
    await accountDb(accountId)
      .prepare('UPDATE webhook_deliveries SET due_at = ? WHERE id = ?')
      .bind(overdue, test.json.data.id)
      .run();
    await alarm(accountId);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await receivedAt(key)).toHaveLength(0);
    const due = await accountDb(accountId)
      .prepare('SELECT due_at FROM webhook_deliveries WHERE id = ?')
      .bind(test.json.data.id)
      .first<{ due_at: number }>();
    expect(due!.due_at).toBe(overdue); // the alarm did not take it

    await call('PATCH', `/api/v1/webhooks/${webhook.id}`, { token: mailKey, body: { enabled: true } });
    await alarm(accountId);
    const [delivery] = await waitForEvents(key, ['webhook.test']);
    expect(delivery!.webhookId).toBe(test.json.data.id);
  });

  it('an endpoint that does not answer times out after 10 s and is retried', async () => {
    const { mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.queued']);
    await controlReceiver(key, { mode: 'hang' });
    await call('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: mailKey });
    const delivery = await firstAttempt(mailKey, webhook.id, 'the timed-out attempt');
    expect(delivery).toMatchObject({ status: 'pending', lastError: 'no answer within 10 s' });
    expect(delivery.lastStatus).toBeUndefined();
    expect(delivery.lastResponse).toBeUndefined();
  }, 45_000);
});

/** The newest delivery of an endpoint once it has been attempted. */
const firstAttempt = (token: string, webhookId: string, what: string, attempts = 1) =>
  eventually(
    async () => {
      const log = await call<{ deliveries: WebhookDelivery[] }>('GET', `/api/v1/webhooks/${webhookId}/deliveries`, {
        token,
      });
      const first = log.json.data.deliveries[0];
      return first && first.attempts >= attempts ? first : undefined;
    },
    what,
    30_000, // a batch may share the queue with another test's endpoint that holds it for 10 s
  );

describe("the answer's body in the delivery log", () => {
  it('the last answer’s body is kept, its first 2,048 bytes, without a character cut in two', async () => {
    const { mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.queued']);
    await controlReceiver(key, { failFirst: 1, body: 'not now' });
    await call('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: mailKey });
    const failed = await firstAttempt(mailKey, webhook.id, 'the failed attempt');
    expect(failed).toMatchObject({
      status: 'pending',
      lastStatus: 500,
      lastError: 'HTTP 500',
      lastResponse: 'not now',
    });

    // 1 + 2 × 3000 bytes: the 2,048th byte is the first half of an é, which is left out
    await controlReceiver(key, { body: `a${'é'.repeat(3000)}` });
    const delivered = await firstAttempt(mailKey, webhook.id, 'the retried attempt', 2);
    expect(delivered).toMatchObject({ status: 'delivered', lastStatus: 200 });
    expect(delivered.lastResponse).toBe(`a${'é'.repeat(1023)}`);
  }, 60_000);

  it('an empty answer is kept as empty', async () => {
    const { mailKey } = await newAccount();
    const { webhook } = await newWebhook(mailKey, ['email.queued']);
    await call('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: mailKey });
    const delivered = await firstAttempt(mailKey, webhook.id, 'the attempt');
    expect(delivered).toMatchObject({ status: 'delivered', lastStatus: 204, lastResponse: '' });
  }, 45_000);

  it('a body that never ends is cut off by the timeout; the status and what came are kept', async () => {
    const { mailKey } = await newAccount();
    const { key, webhook } = await newWebhook(mailKey, ['email.queued']);
    await controlReceiver(key, { mode: 'stall', body: 'received, still talking' });
    await call('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: mailKey });
    const delivered = await firstAttempt(mailKey, webhook.id, 'the stalled attempt');
    expect(delivered).toMatchObject({ status: 'delivered', lastStatus: 200, lastResponse: 'received, still talking' });
  }, 45_000);
});
