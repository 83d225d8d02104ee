// The account's object: each operation is one transaction (a failure after its first writes leaves nothing), and
// its alarm moves the bodies an accept kept to the account's bucket.
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
});
