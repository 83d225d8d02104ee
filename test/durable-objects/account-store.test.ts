// The account's object: each operation is one transaction (a failure after its first writes leaves nothing), and
// its alarm moves the bodies an accept kept to the account's bucket, and plans what came in while it was due.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { accountObject } from '../../src/store/account/client';
import { accountDb, runAccountAlarm } from '../support/account-db';
import { newAccount, uniqueAddress } from '../support/api';
import { testEmail } from '../support/delivery';

const newEmail = (accountId: string) =>
  testEmail(accountId, uniqueAddress('atomic'), { fromName: null, subject: 'Atomic' });

const count = async (accountId: string, table: string) =>
  (await accountDb(accountId).prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>())!.n;

describe('AccountStore', () => {
  it('runs an operation as one transaction: a failure after its first writes leaves none of them', async () => {
    const { accountId } = await newAccount();
    const space = { accountId, test: false };
    // The key's response has no status: writing it fails after the email, its recipients and body were written.
    const broken = { space, key: 'k', requestHash: 'h', status: undefined, body: '{}' };
    const result = await accountObject(env, accountId).run(accountId, 'storeAcceptedEmails', [
      [newEmail(accountId)],
      {},
      broken,
    ]);
    expect(result).toEqual({ ok: false, message: expect.stringContaining('undefined') });
    for (const table of ['emails', 'email_recipients', 'email_events', 'email_bodies', 'idempotency_records']) {
      expect(await count(accountId, table)).toBe(0);
    }
    // The same accept with its response stores everything.
    const whole = { ...broken, status: 200 };
    const stored = await accountObject(env, accountId).run(accountId, 'storeAcceptedEmails', [
      [newEmail(accountId)],
      {},
      whole,
    ]);
    expect(stored).toMatchObject({ ok: true, value: { kind: 'stored', stored: true } });
    expect(await count(accountId, 'emails')).toBe(1);
    expect(await count(accountId, 'idempotency_records')).toBe(1);
  });

  it("its alarm moves kept bodies to the account's bucket and forgets them", async () => {
    const { accountId } = await newAccount();
    const email = newEmail(accountId);
    await accountObject(env, accountId).run(accountId, 'storeAcceptedEmails', [[email], {}, null]);
    await runAccountAlarm(accountId);
    expect(await (await env.BODIES.get(email.id))?.json()).toEqual({ html: '<p>hi</p>', text: 'hi' });
    expect(await count(accountId, 'email_bodies')).toBe(0);
  });

  it('an operation while the alarm is due leaves the planning to the alarm, which finds what the operation added', async () => {
    const { accountId } = await newAccount();
    const store = accountObject(env, accountId);
    const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
    // Its body is kept: the alarm is due at once.
    await store.run(accountId, 'storeAcceptedEmails', [[{ ...newEmail(accountId), scheduledAt: at(60) }], {}, null]);
    // Sooner work, added while that alarm is due.
    const sooner = { ...newEmail(accountId), scheduledAt: at(30) };
    await store.run(accountId, 'storeAcceptedEmails', [[sooner], {}, null]);
    expect(await runAccountAlarm(accountId)).toBe(true);
    const stub = env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId));
    const alarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    // Scheduled mail is dispatched 90 s before its time.
    expect(alarm).toBe(Date.parse(sooner.scheduledAt) - 90_000);
  });
});
