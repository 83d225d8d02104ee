// Outcomes written while the next mails are sent: what arrives during a write goes in the next call together,
// each message is settled only once its outcome is written, and one outcome the object refuses holds back none
// of the others.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { type Outcome, OutcomeWriter } from '../../src/queue/record-outcomes';
import { type AccountStore, accountStore } from '../../src/store/account/client';
import type { AttemptRecord } from '../../src/store/account/delivery';
import { accountDb } from '../support/account-db';
import { newAccount, uniqueAddress } from '../support/api';
import { storedEmail } from '../support/delivery';

const OWNER = 'writer-under-test';
const LEASE_SECONDS = 60;

/** A queue message that notes what was done with it. */
function noteMessage() {
  const settled: string[] = [];
  const message = {
    ack: () => settled.push('ack'),
    retry: (options?: { delaySeconds?: number }) => settled.push(`retry ${options?.delaySeconds}`),
  } as unknown as Message<unknown>;
  return { message, settled };
}

/** `count` emails of a new account, leased to OWNER as the consumer's claim leaves them. */
async function leasedEmails(count: number) {
  const { accountId } = await newAccount();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await storedEmail(accountId, uniqueAddress(`writer-${i}`)));
  await accountDb(accountId)
    .prepare(`UPDATE emails SET lease_owner = ?, lease_until = ? WHERE id IN (${ids.map(() => '?').join(',')})`)
    .bind(OWNER, Date.now() + LEASE_SECONDS * 1000, ...ids)
    .run();
  const store = accountStore(env, accountId);
  const emails = await Promise.all(ids.map(async (id) => (await store.findEmail(id))!));
  return { accountId, store, emails };
}

/** The outcome of a message sent to every recipient. */
function sentOutcome(email: NonNullable<Awaited<ReturnType<AccountStore['findEmail']>>>, webhookData = {}) {
  const { message, settled } = noteMessage();
  const to = email.toAddresses[0]!;
  const record: AttemptRecord = {
    email: { id: email.id, accountId: email.accountId },
    result: {
      recipients: [{ position: 0, address: to, canonical: to, status: 'SENT', reply: '250 ok' }],
      status: 'SENT',
      reply: '250 ok',
      suppress: [],
      events: [{ type: 'sent', detail: '250 ok' }],
    },
    attempted: true,
    retryAt: null,
    owner: OWNER,
    renewLeaseSeconds: null,
    webhookEvents: [{ type: 'email.sent', data: { emailId: email.id, ...webhookData } } as never],
  };
  const outcome: Outcome = { message, email, record, retryInSeconds: null, providerIds: [] };
  return { outcome, settled };
}

/** The store, with the size of every `recordAttempts` call noted. */
function countingStore(store: AccountStore) {
  const calls: number[] = [];
  const counted = new Proxy(store, {
    get: (target, name) =>
      name === 'recordAttempts'
        ? (records: AttemptRecord[]) => {
            calls.push(records.length);
            return target.recordAttempts(records);
          }
        : Reflect.get(target, name),
  });
  return { counted, calls };
}

describe('OutcomeWriter', () => {
  it('writes the first outcome at once and those that came meanwhile in one call; acks after writing', async () => {
    const { store, emails } = await leasedEmails(4);
    const { counted, calls } = countingStore(store);
    const writer = new OutcomeWriter(env, LEASE_SECONDS);
    const outcomes = emails.map((email) => sentOutcome(email));
    for (const { outcome } of outcomes) writer.add(counted, outcome);
    expect(outcomes.map((o) => o.settled.length)).toEqual([0, 0, 0, 0]);
    await writer.drained();
    expect(calls).toEqual([1, 3]);
    expect(outcomes.map((o) => o.settled)).toEqual([['ack'], ['ack'], ['ack'], ['ack']]);
    for (const email of emails) {
      expect(await store.findEmail(email.id)).toMatchObject({ status: 'SENT' });
    }
  });

  it('writes the others of a refused call one by one, and puts back only the refused one for its lease', async () => {
    const { store, emails } = await leasedEmails(4);
    const { counted, calls } = countingStore(store);
    const writer = new OutcomeWriter(env, LEASE_SECONDS);
    // JSON cannot hold a BigInt: the object's transaction for that outcome throws.
    const outcomes = emails.map((email, i) => sentOutcome(email, i === 2 ? { size: 1n } : {}));
    for (const { outcome } of outcomes) writer.add(counted, outcome);
    await writer.drained();
    expect(calls).toEqual([1, 3, 1, 1, 1]);
    expect(outcomes.map((o) => o.settled)).toEqual([['ack'], ['ack'], [`retry ${LEASE_SECONDS}`], ['ack']]);
    const statuses = await Promise.all(emails.map(async (e) => (await store.findEmail(e.id))!.status));
    expect(statuses).toEqual(['SENT', 'SENT', 'QUEUED', 'SENT']);
  });
});
