// The outbox recovery (the account object's alarm): the object is the truth, so a QUEUED email whose queue
// message was lost is queued again once overdue, and delivered once through the real queue.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { config } from '../../src/config';
import { recoverOverdueMail } from '../../src/queue/producer';
import { accountObject, accountStore } from '../../src/store/account/client';
import { ObjectSql } from '../../src/store/account/object-sql';
import { accountDb, accountIdOfEmail } from '../support/account-db';
import { admin, call, inbox, newAccount, uniqueAddress, waitForInbox, waitForStatus } from '../support/api';
import { storedEmail } from '../support/delivery';
import type { EmailDetail } from '../support/responses';

const ago = (seconds: number) => Date.now() - seconds * 1000;
const setRow = async (id: string, assignments: string, ...values: unknown[]) =>
  accountDb(await accountIdOfEmail(id))
    .prepare(`UPDATE emails SET ${assignments} WHERE id = ?`)
    .bind(...values, id)
    .run();
const findEmail = async (id: string) => accountStore(env, await accountIdOfEmail(id)).findEmail(id);
/** What the account's alarm does at its time, now. */
const alarm = async (accountId: string) => {
  await accountObject(env, accountId).wake();
};
const recoveredEvents = async (accountId: string, ids: string[]) =>
  (await accountDb(accountId)
    .prepare(
      `SELECT COUNT(*) AS n FROM email_events WHERE type = 'recovered' AND email_id IN (SELECT value FROM json_each(?))`,
    )
    .bind(JSON.stringify(ids))
    .first<{ n: number }>())!.n;

describe('outbox recovery (the account alarm)', () => {
  it('an accepted email whose queue send fails after the answer stays QUEUED, and the alarm delivers it', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('queue-down');
    const failingQueue = { ...env.MAIL_QUEUE, sendBatch: () => Promise.reject(new Error('queue unavailable')) };
    const res = await call<{ id: string }>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 'Queue down', text: 'x' },
      bindings: { ...env, MAIL_QUEUE: failingQueue as unknown as Queue },
    });
    expect(res.status).toBe(200);
    const id = res.json.data!.id;
    await new Promise((r) => setTimeout(r, 1000));
    expect(await findEmail(id)).toMatchObject({ status: 'QUEUED' });
    expect(await inbox(to)).toHaveLength(0);
    await setRow(id, 'due_at = ?', ago(31));
    // The object set its alarm when it took the email (the grace period away): what it does then, now.
    await alarm(await accountIdOfEmail(id));
    await waitForStatus(mailKey, id, 'SENT');
    expect(await waitForInbox(to)).toHaveLength(1);
  });

  it('queues an overdue email whose message was lost; it is delivered once and its timeline says recovered', async () => {
    const { accountId, mailKey } = await newAccount();
    const to = uniqueAddress('lost');
    const id = await storedEmail(accountId, to); // stored, but no queue message: a crash before the send
    await setRow(id, 'due_at = ?', ago(31));
    await alarm(accountId);
    await waitForStatus(mailKey, id, 'SENT');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await inbox(to)).toHaveLength(1);
    const detail = await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey });
    expect(detail.json.data.events.map((e) => e.type)).toEqual(['queued', 'recovered', 'sent']);
  });

  it('a lease left by a crashed consumer: taken again once it has run out, not before', async () => {
    const { accountId, mailKey } = await newAccount();
    const to = uniqueAddress('crashed-consumer');
    const id = await storedEmail(accountId, to);
    const future = Date.now() + 60_000;
    await setRow(id, 'due_at = ?, lease_until = ?, lease_owner = ?', ago(120), future, 'dead-consumer');
    await alarm(accountId);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await findEmail(id)).toMatchObject({ status: 'QUEUED' });
    expect(await inbox(to)).toHaveLength(0);

    await setRow(id, 'lease_until = ?', ago(1));
    await alarm(accountId);
    await waitForStatus(mailKey, id, 'SENT');
    expect(await waitForInbox(to)).toHaveLength(1);
  });

  it('leaves alone what is not overdue: within the grace period, held, waiting for a retry, finished', async () => {
    const { accountId } = await newAccount();
    const recent = await storedEmail(accountId, uniqueAddress('recent'));
    const held = await storedEmail(accountId, uniqueAddress('held'));
    const retryLater = await storedEmail(accountId, uniqueAddress('retry-later'));
    const sent = await storedEmail(accountId, uniqueAddress('sent'));
    await setRow(recent, 'due_at = ?', ago(5));
    await setRow(held, 'due_at = ?, held = 1', ago(600));
    await setRow(retryLater, 'due_at = ?', Date.now() + 300_000);
    await setRow(sent, "due_at = ?, status = 'SENT'", ago(600));
    // Frozen, so that the held email stays held (unfrozen, the sweep's release would queue it, rightly).
    expect((await admin('PUT', '/admin/v1/settings', { frozen: true })).status).toBe(200);
    try {
      await alarm(accountId);
      await new Promise((r) => setTimeout(r, 2000));
      for (const id of [recent, held, retryLater]) {
        expect(await findEmail(id)).toMatchObject({ status: 'QUEUED', attempts: 0 });
      }
      expect(await recoveredEvents(accountId, [recent, held, retryLater, sent])).toBe(0);
    } finally {
      expect((await admin('PUT', '/admin/v1/settings', { frozen: false })).status).toBe(200);
    }
  });

  it('two alarms at once (interleaving at their queue sends) queue an overdue email once', async () => {
    const { accountId } = await newAccount();
    const id = await storedEmail(accountId, uniqueAddress('twice'));
    await setRow(id, 'due_at = ?', ago(600));
    await Promise.all([alarm(accountId), alarm(accountId)]);
    expect(await recoveredEvents(accountId, [id])).toBe(1);
  });

  it('OUTBOX_GRACE_SECONDS sets the grace period', async () => {
    const { accountId, mailKey } = await newAccount();
    const id = await storedEmail(accountId, uniqueAddress('grace'));
    await setRow(id, 'due_at = ?', ago(5));
    const { graceSeconds } = config({ ...env, OUTBOX_GRACE_SECONDS: '2' }).outbox;
    const stub = env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId));
    const queued = await runInDurableObject(stub, (_instance, state) =>
      recoverOverdueMail(env, new ObjectSql(state.storage), accountId, graceSeconds),
    );
    expect(queued).toBe(1);
    await waitForStatus(mailKey, id, 'SENT');
  });

  it('the alarm comes on its own within the grace period of an email left QUEUED', async () => {
    const { accountId } = await newAccount();
    await storedEmail(accountId, uniqueAddress('own-alarm'));
    const stub = env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId));
    const alarmAt = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    const { graceSeconds } = config(env).outbox;
    expect(alarmAt).not.toBeNull();
    expect(alarmAt!).toBeLessThanOrEqual(Date.now() + graceSeconds * 1000);
  });
});
