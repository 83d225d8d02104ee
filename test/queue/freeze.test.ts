// Freeze mode end to end: held NORMAL mail, URGENT passing, release on unfreeze.
import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import worker from '../../src/index';
import type { MailJob } from '../../src/queue/jobs';
import { accountObject, accountStore } from '../../src/store/account/client';
import { accountDb, accountIdOfEmail } from '../support/account-db';
import { admin, call, inbox, newAccount, uniqueAddress, waitForInbox, waitForStatus } from '../support/api';
import type { EmailDetail, QueuedEmail } from '../support/responses';

const findEmail = async (id: string) => accountStore(env, await accountIdOfEmail(id)).findEmail(id);
const emailRow = async (id: string) =>
  accountDb(await accountIdOfEmail(id))
    .prepare('SELECT held, status FROM emails WHERE id = ?')
    .bind(id)
    .first();
const holding = async (accountId: string) =>
  env.DB.prepare('SELECT account_id FROM held_mail WHERE account_id = ?').bind(accountId).first();

const setFrozen = async (frozen: boolean) =>
  expect((await admin('PUT', '/admin/v1/settings', { frozen })).status).toBe(200);

afterEach(async () => setFrozen(false));

describe('freeze mode', () => {
  it('holds NORMAL mail, lets URGENT through, and releases the held mail once on unfreeze', async () => {
    const { mailKey } = await newAccount();
    await setFrozen(true);
    const normalTo = uniqueAddress('frozen-normal');
    const urgentTo = uniqueAddress('frozen-urgent');
    const normal = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: normalTo, subject: 'n', text: 'n' },
    });
    const urgent = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: urgentTo, subject: 'u', text: 'u', priority: 'URGENT' },
    });
    expect(normal.json.data.status).toBe('QUEUED');
    expect(urgent.json.data.status).toBe('QUEUED');

    await waitForStatus(mailKey, urgent.json.data.id, 'SENT');
    await new Promise((r) => setTimeout(r, 3000));
    expect(await inbox(normalTo)).toHaveLength(0);
    expect(await findEmail(normal.json.data.id)).toMatchObject({ status: 'QUEUED' });

    await setFrozen(false);
    await waitForStatus(mailKey, normal.json.data.id, 'SENT');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await inbox(normalTo)).toHaveLength(1);
    expect(await inbox(urgentTo)).toHaveLength(1);
    const detail = await call<EmailDetail>('GET', `/api/v1/emails/${normal.json.data.id}`, { token: mailKey });
    expect(detail.json.data.events.map((e) => e.type)).toEqual(['queued', 'held', 'released', 'sent']);
  });

  it('holds template sends and send-test as well', async () => {
    const { mailKey } = await newAccount();
    await setFrozen(true);
    const to = uniqueAddress('frozen-test');
    const res = await call<QueuedEmail>('POST', '/api/v1/templates/send-test', { token: mailKey, body: { to } });
    await new Promise((r) => setTimeout(r, 2000));
    expect(await inbox(to)).toHaveLength(0);
    await setFrozen(false);
    await waitForStatus(mailKey, res.json.data.id, 'SENT');
  });

  it('a NORMAL message that reaches the consumer while frozen is held, not sent, and released later', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('frozen-late');
    // A delivered email is put back to QUEUED (as if its message were still in flight), then frozen.
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 'late', text: 'x' },
    });
    const emailId: string = res.json.data.id;
    const accountId = await accountIdOfEmail(emailId);
    await waitForStatus(mailKey, emailId, 'SENT');
    const db = accountDb(accountId);
    await db.batch([
      db.prepare(`UPDATE emails SET status = 'QUEUED' WHERE id = ?`).bind(emailId),
      db.prepare(`UPDATE email_recipients SET status = 'QUEUED' WHERE email_id = ?`).bind(emailId),
    ]);
    await setFrozen(true);
    const batch = createMessageBatch<MailJob>('postcode-mail', [
      { id: 'late-1', timestamp: new Date(), attempts: 1, body: { kind: 'email', accountId, emailId } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(['late-1']);
    expect(await emailRow(emailId)).toEqual({ held: 1, status: 'QUEUED' });
    expect(await holding(accountId)).not.toBeNull();
    expect(await inbox(to)).toHaveLength(1);

    await setFrozen(false);
    await waitForStatus(mailKey, emailId, 'SENT');
    await waitForInbox(to, 2);
  });

  it('held mail survives in its account object (no queue message exists until release)', async () => {
    const { accountId, mailKey } = await newAccount();
    await setFrozen(true);
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: uniqueAddress('held'), subject: 'h', text: 'h' },
    });
    const id = res.json.data.id;
    expect(await emailRow(id)).toEqual({ held: 1, status: 'QUEUED' });
    // The control plane knows this account holds mail, so an unfreeze wakes it.
    expect(await holding(accountId)).not.toBeNull();
    // The object's own look (its alarm, within a minute) does nothing while frozen …
    await accountObject(env, accountId).wake();
    expect(await emailRow(id)).toEqual({ held: 1, status: 'QUEUED' });
    // … and releases once the setting is off, even without the admin route's wake-up.
    await env.DB.prepare('UPDATE settings SET frozen = 0').run();
    await accountObject(env, accountId).wake();
    await waitForStatus(mailKey, id, 'SENT');
    expect(await holding(accountId)).toBeNull();
  });

  it('the object holding mail looks again within a minute on its own', async () => {
    const { accountId, mailKey } = await newAccount();
    await setFrozen(true);
    await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: uniqueAddress('held-alarm'), subject: 'h', text: 'h' },
    });
    const stub = env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId));
    const alarmAt = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarmAt).not.toBeNull();
    expect(alarmAt!).toBeLessThanOrEqual(Date.now() + 60_000);
  });
});
