// Scheduled sends: `scheduledAt` on routes 1, 3 and the batch; cancel; move; the account object's alarm.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { config } from '../../../src/config';
import { accountObject } from '../../../src/store/account/client';
import { accountDb, accountIdOfEmail, runAccountAlarm } from '../../support/account-db';
import {
  admin,
  call,
  eventually,
  expectError,
  expectFieldErrors,
  inbox,
  newAccount,
  uniqueAddress,
  waitForInbox,
} from '../../support/api';
import type { EmailDetail, QueuedEmail } from '../../support/responses';
import { createTemplate } from '../../support/templates';
import { newWebhook, waitForEvents } from '../../support/webhooks';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const queue = (token: string, body: object) => call<QueuedEmail>('POST', '/api/v1/emails', { token, body });
const detail = async (token: string, id: string) =>
  (await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token })).json.data;
/** What the account's alarm does at its time, now. */
const alarm = async (id: string) => accountObject(env, await accountIdOfEmail(id)).wake();

/** An email stored SCHEDULED for an hour from now (its message is left to the account's alarm). */
async function scheduledLater(mailKey: string, to = uniqueAddress('later')) {
  const res = await queue(mailKey, { to, subject: 'Later', text: 'x', scheduledAt: inSeconds(3600) });
  expect(res.json.data.status).toBe('SCHEDULED');
  return { id: res.json.data.id, to };
}

/** Its time came more than the grace period ago, and its queue message was lost (say, with a restarted `wrangler dev`). */
const timeCameAndMessageLost = async (id: string) =>
  accountDb(await accountIdOfEmail(id))
    .prepare(`UPDATE emails SET due_at = ?1, scheduled_at = ?1 WHERE id = ?2`)
    .bind(Date.now() - (config(env).outbox.graceSeconds + 5) * 1000, id)
    .run();

describe('scheduledAt on POST /api/v1/emails', () => {
  it('SCHEDULED until its time, delivered after it (not before), with its timeline', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('sched');
    const at = inSeconds(4);
    const res = await queue(mailKey, { to, subject: 'On time', text: 'x', scheduledAt: at });
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ id: expect.stringMatching(/^em_/), status: 'SCHEDULED' });
    const before = await detail(mailKey, res.json.data.id);
    expect(before).toMatchObject({ status: 'SCHEDULED', scheduledAt: at });
    expect(before.events).toEqual([{ type: 'scheduled', at: expect.any(String), detail: at }]);
    await sleep(2000);
    expect(await inbox(to)).toEqual([]);
    const [mail] = await waitForInbox(to);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(at));
    expect(mail!.subject).toBe('On time');
    const after = await detail(mailKey, res.json.data.id);
    expect(after.status).toBe('SENT');
    expect(Date.parse(after.sentAt!)).toBeGreaterThanOrEqual(Date.parse(at));
  });

  it('refuses a past, unparsable, zone-less or too distant time, naming scheduledAt', async () => {
    const { mailKey } = await newAccount();
    const body = { to: uniqueAddress('bad'), subject: 's', text: 'x' };
    await expectFieldErrors(
      (b) => queue(mailKey, b as object),
      [
        [{ ...body, scheduledAt: inSeconds(-60) }, 'scheduledAt'],
        [{ ...body, scheduledAt: 'tomorrow' }, 'scheduledAt'],
        [{ ...body, scheduledAt: '2026-13-40T99:00:00Z' }, 'scheduledAt'],
        [{ ...body, scheduledAt: inSeconds(3600).replace('Z', '') }, 'scheduledAt'],
        [{ ...body, scheduledAt: inSeconds(31 * 86_400) }, 'scheduledAt'],
        [{ ...body, scheduledAt: `${inSeconds(3600)}\r\nX: y` }, 'scheduledAt'],
        [{ ...body, scheduledAt: 1_900_000_000 }, 'scheduledAt'],
      ],
    );
  });

  it('accepts an offset other than Z and 30 days ahead', async () => {
    const { mailKey } = await newAccount();
    const plusTwo = new Date(Date.now() + 7_200_000 + 7_200_000).toISOString().replace('Z', '+02:00');
    const res = await queue(mailKey, { to: uniqueAddress('tz'), subject: 's', text: 'x', scheduledAt: plusTwo });
    expect(res.json.data.status).toBe('SCHEDULED');
    expect((await detail(mailKey, res.json.data.id)).scheduledAt).toBe(new Date(plusTwo).toISOString());
    const far = await queue(mailKey, {
      to: uniqueAddress('tz'),
      subject: 's',
      text: 'x',
      scheduledAt: inSeconds(29 * 86_400),
    });
    expect(far.status).toBe(200);
  });

  it('works on route 3 and in the batch', async () => {
    const { mailKey } = await newAccount();
    const template = await createTemplate(mailKey, { subject: 'Hi', textBody: 'Hello' });
    const sent = await call<QueuedEmail & { templateId: string }>('POST', '/api/v1/templates/send', {
      token: mailKey,
      body: { to: uniqueAddress('tpl'), templateId: template.id, scheduledAt: inSeconds(3600) },
    });
    expect(sent.json.data).toMatchObject({ status: 'SCHEDULED', templateId: template.id });
    const batch = await call<QueuedEmail[]>('POST', '/api/v1/emails/batch', {
      token: mailKey,
      body: { emails: [{ to: uniqueAddress('b'), subject: 's', text: 'x', scheduledAt: inSeconds(3600) }] },
    });
    expect(batch.json.data[0]!.status).toBe('SCHEDULED');
  });

  it('the object is the truth: a scheduled email whose message was lost goes out from its alarm', async () => {
    const { mailKey } = await newAccount();
    const { id, to } = await scheduledLater(mailKey);
    await alarm(id); // an hour away: not dispatched yet
    await sleep(1500);
    expect(await inbox(to)).toEqual([]);
    await timeCameAndMessageLost(id);
    await alarm(id);
    await waitForInbox(to);
    expect((await detail(mailKey, id)).status).toBe('SENT');
  });

  it('the alarm rings 90 s before a later email is due and dispatches it then, not sooner', async () => {
    const { accountId, mailKey } = await newAccount();
    const to = uniqueAddress('alarm-dispatch');
    const scheduledAt = inSeconds(600);
    const res = await queue(mailKey, { to, subject: 'Later', text: 'x', scheduledAt });
    const id = res.json.data.id;
    const stub = env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId));
    const alarmAt = () => runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    const dispatchedUntil = async () =>
      Number(
        (await accountDb(accountId)
          .prepare("SELECT value FROM object_state WHERE key = 'dispatched_until'")
          .first<string>('value')) ?? 0,
      );
    // Once the alarm that moves its body to R2 has rung, the next is 90 s before its time.
    await eventually(async () => ((await alarmAt())! > Date.now() + 60_000 ? true : undefined), 'the email alarm');
    const ringsAt = (await alarmAt())!;
    expect(Math.abs(ringsAt - (Date.parse(scheduledAt) - 90_000))).toBeLessThan(5_000);
    expect(await dispatchedUntil()).toBeLessThan(Date.parse(scheduledAt));
    // Its time comes: the alarm dispatches it (a queue message delayed to its time), and it is not sent early.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(ringsAt);
      expect(await runAccountAlarm(accountId)).toBe(true);
      expect(await dispatchedUntil()).toBeGreaterThanOrEqual(Date.parse(scheduledAt));
    } finally {
      vi.useRealTimers();
    }
    expect((await detail(mailKey, id)).status).toBe('SCHEDULED');
    expect(await inbox(to)).toEqual([]);
  });

  it('freeze mode holds a scheduled NORMAL email when it comes due, not before', async () => {
    const { mailKey } = await newAccount();
    const { id, to } = await scheduledLater(mailKey);
    try {
      await admin('PUT', '/admin/v1/settings', { frozen: true });
      expect((await detail(mailKey, id)).status).toBe('SCHEDULED');
      await timeCameAndMessageLost(id);
      await alarm(id);
      for (let i = 0; i < 50 && !(await detail(mailKey, id)).events.some((e) => e.type === 'held'); i++) {
        await sleep(100);
      }
      const held = await detail(mailKey, id);
      expect(held.status).toBe('QUEUED');
      expect(held.events.map((e) => e.type)).toEqual(['scheduled', 'held']);
      expect(await inbox(to)).toEqual([]);
    } finally {
      await admin('PUT', '/admin/v1/settings', { frozen: false });
    }
    await waitForInbox(to);
  });
});

describe('POST /api/v1/emails/{emailId}/cancel', () => {
  it('cancels a scheduled email: CANCELED with its recipients, never sent, email.canceled fires', async () => {
    const { mailKey } = await newAccount();
    const hook = await newWebhook(mailKey, ['email.queued', 'email.canceled']);
    const to = uniqueAddress('cancel');
    const res = await queue(mailKey, {
      to,
      subject: 'Never',
      text: 'x',
      scheduledAt: inSeconds(3),
      tags: [{ name: 'k', value: 'v' }],
    });
    const canceled = await call('POST', `/api/v1/emails/${res.json.data.id}/cancel`, { token: mailKey });
    expect(canceled.status).toBe(200);
    expect(canceled.json.data).toEqual({ id: res.json.data.id, status: 'CANCELED' });
    const after = await detail(mailKey, res.json.data.id);
    expect(after.status).toBe('CANCELED');
    expect(after.recipients).toEqual([{ email: to, kind: 'to', status: 'CANCELED' }]);
    expect(after.events.map((e) => e.type)).toEqual(['scheduled', 'canceled']);
    await sleep(5000);
    expect(await inbox(to)).toEqual([]);
    const events = await waitForEvents(hook.key, ['email.queued', 'email.canceled']);
    expect(events.every((e) => e.signatureValid)).toBe(true);
    const data = { emailId: res.json.data.id, tags: [{ name: 'k', value: 'v' }] };
    expect(events.find((e) => e.payload.type === 'email.queued')!.payload.data).toMatchObject({
      ...data,
      status: 'SCHEDULED',
    });
    expect(events.find((e) => e.payload.type === 'email.canceled')!.payload.data).toMatchObject({
      ...data,
      status: 'CANCELED',
    });
  });

  it('409 EMAIL_NOT_CANCELABLE once canceled or once it left; 404 for unknown or another account', async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const { id } = await scheduledLater(owner.mailKey);
    expectError(await call('POST', `/api/v1/emails/${id}/cancel`, { token: stranger.mailKey }), 404, 'EMAIL_NOT_FOUND');
    expect((await call('POST', `/api/v1/emails/${id}/cancel`, { token: owner.mailKey })).status).toBe(200);
    const again = await call('POST', `/api/v1/emails/${id}/cancel`, { token: owner.mailKey });
    expectError(again, 409, 'EMAIL_NOT_CANCELABLE');
    expect(again.json.error.message).toContain('CANCELED');
    const to = uniqueAddress('gone');
    const now = await queue(owner.mailKey, { to, subject: 's', text: 'x' });
    await waitForInbox(to);
    expectError(
      await call('POST', `/api/v1/emails/${now.json.data.id}/cancel`, { token: owner.mailKey }),
      409,
      'EMAIL_NOT_CANCELABLE',
    );
    expectError(
      await call('POST', '/api/v1/emails/em_unknown000000000000/cancel', { token: owner.mailKey }),
      404,
      'EMAIL_NOT_FOUND',
    );
    expectError(await call('POST', `/api/v1/emails/${id}/cancel`, { token: owner.serverKey }), 403, 'SCOPE_REQUIRED');
  });
});

describe('PATCH /api/v1/emails/{emailId}', () => {
  it('moves a scheduled email: sent at the new time, not the old one', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('move');
    const res = await queue(mailKey, { to, subject: 'Moved', text: 'x', scheduledAt: inSeconds(2) });
    const later = inSeconds(6);
    const moved = await call('PATCH', `/api/v1/emails/${res.json.data.id}`, {
      token: mailKey,
      body: { scheduledAt: later },
    });
    expect(moved.status).toBe(200);
    expect(moved.json.data).toEqual({ id: res.json.data.id, status: 'SCHEDULED', scheduledAt: later });
    await sleep(4000);
    expect(await inbox(to)).toEqual([]); // the old time passed: its message found the email not due
    await waitForInbox(to);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(later));
    const after = await detail(mailKey, res.json.data.id);
    expect(after.events.map((e) => e.type)).toEqual(['scheduled', 'rescheduled', 'sent']);
    expect(after.scheduledAt).toBe(later);
  });

  it('409 EMAIL_NOT_SCHEDULED when it is not scheduled any more; 400 for a bad time; 404 for another account', async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const { id } = await scheduledLater(owner.mailKey);
    const patch = (token: string, body: unknown, email = id) =>
      call('PATCH', `/api/v1/emails/${email}`, { token, body });
    expectError(await patch(stranger.mailKey, { scheduledAt: inSeconds(7200) }), 404, 'EMAIL_NOT_FOUND');
    await expectFieldErrors(
      (b) => patch(owner.mailKey, b),
      [
        [{ scheduledAt: inSeconds(-10) }, 'scheduledAt'],
        [{ scheduledAt: 'soon' }, 'scheduledAt'],
        [{}, 'scheduledAt'],
        [{ scheduledAt: inSeconds(7200), subject: 'x' }, 'body'],
      ],
    );
    await call('POST', `/api/v1/emails/${id}/cancel`, { token: owner.mailKey });
    expectError(await patch(owner.mailKey, { scheduledAt: inSeconds(7200) }), 409, 'EMAIL_NOT_SCHEDULED');
  });
});
