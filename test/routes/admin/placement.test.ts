// Where an account's data lives: region and jurisdiction set by the operator until the account's data is first
// reached, the object made there (a jurisdiction's namespace), bodies in that jurisdiction's bucket, and the place
// fixed from then on.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { accountStub } from '../../../src/store/placement';
import { accountDb } from '../../support/account-db';
import { admin, call, eventually, expectError, newAccount, uniqueAddress, waitForStatus } from '../../support/api';
import type { QueuedEmail } from '../../support/responses';

type AccountView = {
  id: string;
  name: string;
  region: string | null;
  jurisdiction: string | null;
  createdAt?: string;
  placedAt?: string | null;
};

const listed = async (id: string) => {
  const res = await admin<{ accounts: AccountView[] }>('GET', '/admin/v1/accounts?limit=100');
  return res.json.data.accounts.find((a) => a.id === id);
};

const emailsIn = (stub: DurableObjectStub) =>
  runInDurableObject(
    stub,
    (_instance, state) => state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM emails').one().n,
  );

describe('POST /admin/v1/accounts: region and jurisdiction', () => {
  it('shows both (null when unset) in its answer and in the list, not placed yet', async () => {
    const placed = await admin<AccountView>('POST', '/admin/v1/accounts', {
      name: 'Placed',
      region: 'oc',
      jurisdiction: 'eu',
    });
    expect(placed.status).toBe(201);
    expect(placed.json.data).toEqual({ id: expect.any(String), name: 'Placed', region: 'oc', jurisdiction: 'eu' });
    const plain = await admin<AccountView>('POST', '/admin/v1/accounts', { name: 'Plain' });
    expect(plain.json.data).toEqual({ id: expect.any(String), name: 'Plain', region: null, jurisdiction: null });
    expect(await listed(placed.json.data.id)).toMatchObject({ region: 'oc', jurisdiction: 'eu', placedAt: null });
    expect(await listed(plain.json.data.id)).toMatchObject({ region: null, jurisdiction: null, placedAt: null });
  });

  it('400 INVALID_INPUT for an unknown region or jurisdiction', async () => {
    expectError(await admin('POST', '/admin/v1/accounts', { name: 'x', region: 'mars' }), 400, 'INVALID_INPUT');
    expectError(await admin('POST', '/admin/v1/accounts', { name: 'x', jurisdiction: 'moon' }), 400, 'INVALID_INPUT');
  });

  it("400 INVALID_INPUT naming the binding when the jurisdiction's buckets are not bound", async () => {
    const { BODIES_FEDRAMP: _, ...withoutBodies } = env;
    const res = await call<unknown>('POST', '/admin/v1/accounts', {
      token: 'test-admin-token',
      body: { name: 'No buckets', jurisdiction: 'fedramp' },
      bindings: withoutBodies as Cloudflare.Env,
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(JSON.stringify(res.json)).toContain('BODIES_FEDRAMP');
  });
});

describe('PATCH /admin/v1/accounts/{accountId}', () => {
  it("changes the place until the account's data is reached, then 409 ACCOUNT_PLACED", async () => {
    const { accountId, mailKey } = await newAccount('Movable', { region: 'weur' });
    const moved = await admin<AccountView>('PATCH', `/admin/v1/accounts/${accountId}`, { region: 'apac' });
    expect(moved.status).toBe(200);
    expect(moved.json.data).toMatchObject({ id: accountId, region: 'apac', jurisdiction: null, placedAt: null });
    const cleared = await admin<AccountView>('PATCH', `/admin/v1/accounts/${accountId}`, { region: null });
    expect(cleared.json.data).toMatchObject({ region: null, jurisdiction: null });
    // The first request that reaches the account's data makes its object: the place is fixed.
    const res = await call('POST', '/api/v1/templates', {
      token: mailKey,
      body: { name: 'first', subject: 's', textBody: 't' },
    });
    expect(res.status).toBe(201);
    expect((await listed(accountId))?.placedAt).toEqual(expect.any(String));
    expectError(await admin('PATCH', `/admin/v1/accounts/${accountId}`, { region: 'enam' }), 409, 'ACCOUNT_PLACED');
    expect(await listed(accountId)).toMatchObject({ region: null, jurisdiction: null });
  });

  it('404 for an unknown account; 400 for a bad value or an unknown field', async () => {
    expectError(await admin('PATCH', '/admin/v1/accounts/acc_doesnotexist234567', { region: 'oc' }), 404, 'NOT_FOUND');
    const { accountId } = await newAccount();
    expectError(await admin('PATCH', `/admin/v1/accounts/${accountId}`, { region: 'mars' }), 400, 'INVALID_INPUT');
    expectError(await admin('PATCH', `/admin/v1/accounts/${accountId}`, { name: 'x' }), 400, 'INVALID_INPUT');
  });
});

describe("a jurisdiction account's data", () => {
  it("lives in the jurisdiction's object and its body in the jurisdiction's bucket, and is delivered", async () => {
    const { accountId, mailKey } = await newAccount('In the EU', { jurisdiction: 'eu' });
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: uniqueAddress('eu'), subject: 'EU', text: 'kept in the EU' },
    });
    expect(res.status).toBe(200);
    const id = res.json.data.id;
    await waitForStatus(mailKey, id, 'SENT');
    // workerd has no jurisdictions: there the pinned object is `eu:<id>` of the default namespace (see
    // src/store/placement.ts); in production it is the account id in the jurisdiction's namespace.
    const pinned = env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(`eu:${accountId}`));
    expect(await emailsIn(await accountStub(env, accountId))).toBe(1);
    expect(await emailsIn(pinned)).toBe(1);
    expect(await emailsIn(env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId)))).toBe(0);
    await eventually(async () => ((await env.BODIES_EU.head(id)) ? true : undefined), 'the body in BODIES_EU');
    expect(await env.BODIES.head(id)).toBeNull();
    // The tests' own way in finds it where src does.
    const row = await accountDb(accountId).prepare('SELECT status FROM emails WHERE id = ?').bind(id).first();
    expect(row).toEqual({ status: 'SENT' });
  });
});
