// The delivery lease of a consumer's batch: recording one message renews the rest of the batch only when
// asked (the consumer asks at most every 10 s), and never touches a row another consumer holds.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { accountStore } from '../../src/store/account/client';
import { accountDb, accountIdOfEmail, emailDb } from '../support/account-db';
import { newAccount, uniqueAddress } from '../support/api';
import { storedEmail } from '../support/delivery';

const OWNER = 'consumer-under-test';
const soon = Date.now() + 5_000;

const leaseOf = async (id: string) => {
  const db = await emailDb(id);
  const row = await db.prepare('SELECT lease_until FROM emails WHERE id = ?').bind(id).first<{ lease_until: number }>();
  return row!.lease_until;
};

/** The email as its account's object holds it. */
const findEmail = async (id: string) => accountStore(env, await accountIdOfEmail(id)).findEmail(id);

async function batchOfThree() {
  const { accountId } = await newAccount();
  const ids = [
    await storedEmail(accountId, uniqueAddress('lease-a')),
    await storedEmail(accountId, uniqueAddress('lease-b')),
    await storedEmail(accountId, uniqueAddress('lease-c')),
  ];
  for (const [i, id] of ids.entries()) {
    await accountDb(accountId)
      .prepare('UPDATE emails SET lease_owner = ?, lease_until = ? WHERE id = ?')
      .bind(i === 2 ? 'another-consumer' : OWNER, soon, id)
      .run();
  }
  return ids;
}

async function recordFirst(ids: string[], renewLeaseSeconds: number | null) {
  const email = (await findEmail(ids[0]!))!;
  const [to] = email.toAddresses;
  const sent = { position: 0, address: to!, canonical: to!, status: 'SENT' as const, reply: null };
  await accountStore(env, email.accountId).recordAttempt({
    email,
    result: { recipients: [sent], status: 'SENT', reply: null, suppress: [], events: [] },
    attempted: true,
    retryAt: null,
    owner: OWNER,
    renewLeaseSeconds,
    webhookEvents: [],
  });
}

describe('recordAttempt and the batch lease', () => {
  it("renews the rest of this consumer's batch when asked, not another consumer's row", async () => {
    const ids = await batchOfThree();
    await recordFirst(ids, 60);
    expect(await findEmail(ids[0]!)).toMatchObject({ status: 'SENT' });
    expect(await leaseOf(ids[1]!)).toBeGreaterThan(Date.now() + 50_000);
    expect(await leaseOf(ids[2]!)).toBe(soon);
  });

  it('leaves the leases alone when not asked', async () => {
    const ids = await batchOfThree();
    await recordFirst(ids, null);
    expect(await findEmail(ids[0]!)).toMatchObject({ status: 'SENT' });
    expect(await leaseOf(ids[1]!)).toBe(soon);
    expect(await leaseOf(ids[2]!)).toBe(soon);
  });
});
