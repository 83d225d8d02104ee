// Test keys (`pc_test_…`): the whole mail pipeline without SMTP, kept apart from live mail.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  admin,
  call,
  eventually,
  expectError,
  inbox,
  newAccount,
  sendLogTotal,
  uniqueAddress,
  waitForInbox,
} from '../../support/api';
import type { EmailDetail, EmailList, QueuedEmail } from '../../support/responses';
import { newWebhook, waitForEvents } from '../../support/webhooks';

type IssuedKey = { id: string; key: string; scopes: string[]; mode: string };

async function testKey(accountId: string): Promise<IssuedKey> {
  const res = await admin<IssuedKey>('POST', `/admin/v1/accounts/${accountId}/api-keys`, {
    scopes: ['mail_api'],
    mode: 'test',
  });
  expect(res.status).toBe(201);
  return res.json.data;
}

const queue = (token: string, body: unknown) => call<QueuedEmail>('POST', '/api/v1/emails', { token, body });
const detail = (token: string, id: string) => call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token });

/** The detail once the email has `status` (the consumer runs in the background). */
async function settled(token: string, id: string, status: string, timeoutMs = 15_000) {
  return eventually(
    async () => {
      const { json } = await detail(token, id);
      return json.data.status === status ? json.data : undefined;
    },
    `${id} to become ${status}`,
    timeoutMs,
  );
}

describe('POST /admin/v1/accounts/{accountId}/api-keys with mode "test"', () => {
  it('issues a pc_test_ key with mail_api only', async () => {
    const { accountId } = await newAccount();
    const key = await testKey(accountId);
    expect(key.key).toMatch(/^pc_test_[a-z2-7]{32}$/);
    expect(key).toMatchObject({ scopes: ['mail_api'], mode: 'test' });
    const live = await admin<IssuedKey>('POST', `/admin/v1/accounts/${accountId}/api-keys`, { scopes: ['mail_api'] });
    expect(live.json.data).toMatchObject({ mode: 'live', key: expect.stringMatching(/^pc_key_/) });
    for (const scopes of [['server_otp'], ['mail_api', 'server_otp']]) {
      const res = await admin('POST', `/admin/v1/accounts/${accountId}/api-keys`, { scopes, mode: 'test' });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toMatch(/^mode: /);
    }
    expectError(
      await admin('POST', `/admin/v1/accounts/${accountId}/api-keys`, { scopes: ['mail_api'], mode: 'sandbox' }),
      400,
      'INVALID_INPUT',
    );
  });
});

describe('mail sent with a test key', () => {
  it('runs the pipeline (SENT, timeline, webhooks) but nothing reaches SMTP', async () => {
    const { accountId, mailKey } = await newAccount();
    const { key } = await testKey(accountId);
    const hook = await newWebhook(mailKey, ['email.queued', 'email.sent']);
    const to = uniqueAddress('testmode');
    const res = await queue(key, {
      to,
      subject: 'Dry run',
      text: 'x',
      attachments: [{ filename: 'a.txt', content: btoa('a') }],
    });
    expect(res.status).toBe(200);
    const email = await settled(key, res.json.data.id, 'SENT');
    expect(email).toMatchObject({ test: true, attempts: 1, recipients: [{ email: to, kind: 'to', status: 'SENT' }] });
    expect(email.events.map((e) => e.type)).toEqual(['queued', 'sent']);
    const events = await waitForEvents(hook.key, ['email.queued', 'email.sent']);
    expect(events.map((e) => e.payload.data.emailId)).toEqual([res.json.data.id, res.json.data.id]);
    expect(events.map((e) => e.payload.data.test)).toEqual([true, true]);
    await new Promise((r) => setTimeout(r, 500));
    expect(await inbox(to)).toEqual([]);
  });

  it('test and live mail are kept apart: each key sees only its own in the send log and the detail', async () => {
    const { accountId, mailKey } = await newAccount();
    const { key } = await testKey(accountId);
    const test = await queue(key, { to: uniqueAddress('apart'), subject: 'Test', text: 'x' });
    const live = await queue(mailKey, { to: uniqueAddress('apart'), subject: 'Live', text: 'x' });
    const testLog = await call<EmailList>('GET', '/api/v1/emails', { token: key });
    expect(testLog.json.data.emails.map((e) => e.id)).toEqual([test.json.data.id]);
    const liveLog = await call<EmailList>('GET', '/api/v1/emails', { token: mailKey });
    expect(liveLog.json.data.emails.map((e) => e.id)).toEqual([live.json.data.id]);
    expectError(await detail(mailKey, test.json.data.id), 404, 'EMAIL_NOT_FOUND');
    expectError(await detail(key, live.json.data.id), 404, 'EMAIL_NOT_FOUND');
    const scheduled = await queue(key, {
      to: uniqueAddress('apart'),
      subject: 'Later',
      text: 'x',
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const cancel = (token: string) => call('POST', `/api/v1/emails/${scheduled.json.data.id}/cancel`, { token });
    expectError(await cancel(mailKey), 404, 'EMAIL_NOT_FOUND');
    expect((await cancel(key)).status).toBe(200);
  });

  it('live mail events say test: false', async () => {
    const { mailKey } = await newAccount();
    const hook = await newWebhook(mailKey, ['email.queued']);
    const res = await queue(mailKey, { to: uniqueAddress('live'), subject: 'Live', text: 'x' });
    const [event] = await waitForEvents(hook.key, ['email.queued']);
    expect(event!.payload.data).toMatchObject({ emailId: res.json.data.id, test: false });
  });

  it('an Idempotency-Key used by a test key is a different key for a live key, and the other way round', async () => {
    const { accountId, mailKey } = await newAccount();
    const { key } = await testKey(accountId);
    const to = uniqueAddress('idem-mode');
    const body = { to, subject: 'Once per mode', text: 'x' };
    const send = (token: string, idem: string) =>
      call<QueuedEmail>('POST', '/api/v1/emails', { token, body, headers: { 'Idempotency-Key': idem } });
    const test = await send(key, 'order-7');
    const live = await send(mailKey, 'order-7');
    expect(live.status).toBe(200);
    expect(live.headers.get('Idempotent-Replayed')).toBeNull();
    expect(live.json.data.id).not.toBe(test.json.data.id);
    expect((await detail(mailKey, live.json.data.id)).status).toBe(200);
    await waitForInbox(to);
    // Each mode replays its own first response.
    expect((await send(key, 'order-7')).json.data.id).toBe(test.json.data.id);
    expect((await send(mailKey, 'order-7')).json.data.id).toBe(live.json.data.id);
    // Live first, then test: the test key gets its own email, never the live id.
    const liveFirst = await send(mailKey, 'order-8');
    const testAfter = await send(key, 'order-8');
    expect(testAfter.headers.get('Idempotent-Replayed')).toBeNull();
    expect(testAfter.json.data.id).not.toBe(liveFirst.json.data.id);
    expect((await detail(key, testAfter.json.data.id)).json.data.test).toBe(true);
  });

  it('bounce@postcode.test: a simulated 550, FAILED, and not added to the suppression list', async () => {
    const { accountId, mailKey } = await newAccount();
    const { key } = await testKey(accountId);
    const res = await queue(key, { to: 'bounce@postcode.test', subject: 'Bounce', text: 'x' });
    const email = await settled(key, res.json.data.id, 'FAILED');
    expect(email.recipients).toEqual([
      { email: 'bounce@postcode.test', kind: 'to', status: 'FAILED', reply: expect.stringMatching(/^550 /) },
    ]);
    const suppressions = await call<{ suppressions: unknown[] }>('GET', '/api/v1/suppressions', { token: mailKey });
    expect(suppressions.json.data.suppressions).toEqual([]);
    // Sent again, it is simulated again (not skipped as suppressed).
    const again = await queue(key, { to: 'bounce@postcode.test', subject: 'Bounce', text: 'x' });
    expect((await settled(key, again.json.data.id, 'FAILED')).recipients[0]!.status).toBe('FAILED');
  });

  it('tempfail@postcode.test: a simulated 451, deferred and retried, FAILED when the attempts run out', async () => {
    const { accountId, mailKey } = await newAccount();
    const { key } = await testKey(accountId);
    const hook = await newWebhook(mailKey, ['email.deferred', 'email.failed']);
    const res = await queue(key, { to: 'tempfail@postcode.test', subject: 'Later', text: 'x' });
    const email = await settled(key, res.json.data.id, 'FAILED', 30_000);
    expect(email.attempts).toBe(Number(env.MAIL_MAX_ATTEMPTS ?? 6));
    expect(email.recipients[0]).toMatchObject({ status: 'FAILED', reply: expect.stringMatching(/^451 /) });
    expect(email.events.filter((e) => e.type === 'deferred').length).toBe(email.attempts - 1);
    await waitForEvents(hook.key, ['email.deferred', 'email.failed']);
  });

  it('a real recipient next to a simulated bounce: SENT overall, that one FAILED', async () => {
    const { accountId } = await newAccount();
    const { key } = await testKey(accountId);
    const to = uniqueAddress('real');
    const res = await queue(key, { to: [to, 'bounce@postcode.test'], subject: 'Mixed', text: 'x' });
    const email = await settled(key, res.json.data.id, 'SENT');
    expect(email.recipients.map((r) => r.status)).toEqual(['SENT', 'FAILED']);
    expect(await inbox(to)).toEqual([]);
  });

  it('test mail does not count against the daily allowance; a revoked test key is refused', async () => {
    const { accountId, mailKey } = await newAccount();
    const issued = await testKey(accountId);
    try {
      await admin('PUT', '/admin/v1/settings', { dailyAllowance: 0 });
      expect((await queue(issued.key, { to: uniqueAddress('allow'), subject: 's', text: 'x' })).status).toBe(200);
      expectError(
        await queue(mailKey, { to: uniqueAddress('allow'), subject: 's', text: 'x' }),
        429,
        'DAILY_LIMIT_REACHED',
      );
    } finally {
      await admin('PUT', '/admin/v1/settings', { dailyAllowance: null });
    }
    expect((await admin('DELETE', `/admin/v1/api-keys/${issued.id}`)).status).toBe(200);
    expectError(
      await queue(issued.key, { to: uniqueAddress('revoked'), subject: 's', text: 'x' }),
      401,
      'UNAUTHORIZED',
    );
    expect(await sendLogTotal(mailKey)).toBe(0);
  });
});
