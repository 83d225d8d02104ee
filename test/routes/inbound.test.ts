// Receiving mail, its addresses and routes: /api/v1/inbound/addresses, /api/v1/inbound/routes, /{routeId}.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { admin, call, expectError, fetchWith, newAccount } from '../support/api';

type Domains = { domains: { domain: string; kind: string }[] };
type Route = {
  id: string;
  pattern: string;
  action: string;
  rejectReason?: string;
  createdAt: string;
  updatedAt: string;
};

const addressesOf = async (token: string) =>
  (await call<Domains>('GET', '/api/v1/inbound/addresses', { token })).json.data.domains;
const create = (token: string, body: object) => call<Route>('POST', '/api/v1/inbound/routes', { token, body });

/** An account with a name of its own, and its receiving domain. */
async function receivingAccount(name = `Acme ${crypto.randomUUID().slice(0, 8)}`) {
  const account = await newAccount(name);
  const [own] = await addressesOf(account.mailKey);
  return { ...account, domain: own!.domain };
}

describe('GET /api/v1/inbound/addresses', () => {
  it('gives the account its subdomain, made from its name and fixed from then on', async () => {
    const suffix = crypto.randomUUID().slice(0, 8);
    const { mailKey } = await newAccount(`Zoë's Café ${suffix}`);
    const domains = await addressesOf(mailKey);
    expect(domains).toEqual([
      { domain: `zoe-s-cafe-${suffix}.${env.INBOUND_DOMAIN}`, kind: 'subdomain', domainId: null },
    ]);
    expect(await addressesOf(mailKey)).toEqual(domains);
  });

  it('another account of the same name gets another subdomain', async () => {
    const name = `Same name ${crypto.randomUUID().slice(0, 8)}`;
    const first = await addressesOf((await newAccount(name)).mailKey);
    const second = await addressesOf((await newAccount(name)).mailKey);
    const third = await addressesOf((await newAccount(name)).mailKey);
    const all = [first[0]!.domain, second[0]!.domain, third[0]!.domain];
    expect(new Set(all).size).toBe(3);
    expect(all.every((d) => d.endsWith(`.${env.INBOUND_DOMAIN}`))).toBe(true);
  });

  it('live mail_api keys only; none without INBOUND_DOMAIN', async () => {
    const { accountId, mailKey, serverKey } = await newAccount();
    expectError(await call('GET', '/api/v1/inbound/addresses', { token: serverKey }), 403, 'SCOPE_REQUIRED');
    const test = await admin<{ key: string }>('POST', `/admin/v1/accounts/${accountId}/api-keys`, {
      scopes: ['mail_api'],
      mode: 'test',
    });
    expectError(await call('GET', '/api/v1/inbound/addresses', { token: test.json.data.key }), 403, 'SCOPE_REQUIRED');
    const off = await fetchWith<Domains>({ INBOUND_DOMAIN: '' }, 'GET', '/api/v1/inbound/addresses', {
      token: mailKey,
    });
    expect(off.json.data).toEqual({ domains: [] });
  });
});

describe('inbound routes', () => {
  it('creates, lists, gets, changes and deletes a route', async () => {
    const { mailKey, domain } = await receivingAccount();
    const created = await create(mailKey, { pattern: `Support@${domain.toUpperCase()}`, action: 'webhook' });
    expect(created.status).toBe(201);
    expect(created.json.data).toEqual({
      id: expect.stringMatching(/^inr_/),
      pattern: `support@${domain}`,
      action: 'webhook',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const { id } = created.json.data;
    const listed = await call<{ routes: Route[] }>('GET', '/api/v1/inbound/routes', { token: mailKey });
    expect(listed.json.data.routes).toEqual([created.json.data]);
    expect((await call<Route>('GET', `/api/v1/inbound/routes/${id}`, { token: mailKey })).json.data).toEqual(
      created.json.data,
    );
    const rejected = await call<Route>('PATCH', `/api/v1/inbound/routes/${id}`, {
      token: mailKey,
      body: { action: 'reject', rejectReason: 'Write to help@acme.example' },
    });
    expect(rejected.json.data).toMatchObject({ action: 'reject', rejectReason: 'Write to help@acme.example' });
    const stored = await call<Route>('PATCH', `/api/v1/inbound/routes/${id}`, {
      token: mailKey,
      body: { action: 'store' },
    });
    expect(stored.json.data.action).toBe('store');
    expect(stored.json.data.rejectReason).toBeUndefined();
    expect((await call('DELETE', `/api/v1/inbound/routes/${id}`, { token: mailKey })).json).toEqual({
      success: true,
      data: { id, deleted: true },
    });
    expectError(
      await call('DELETE', `/api/v1/inbound/routes/${id}`, { token: mailKey }),
      404,
      'INBOUND_ROUTE_NOT_FOUND',
    );
  });

  it('a reject route without a reason gets the default; a reason goes with reject only', async () => {
    const { mailKey, domain } = await receivingAccount();
    const rejected = await create(mailKey, { pattern: `old@${domain}`, action: 'reject' });
    expect(rejected.json.data.rejectReason).toBe('This address does not accept mail');
    const withReason = await create(mailKey, { pattern: `x@${domain}`, action: 'store', rejectReason: 'no' });
    expectError(withReason, 400, 'INVALID_INPUT');
    const change = await call('PATCH', `/api/v1/inbound/routes/${rejected.json.data.id}`, {
      token: mailKey,
      body: { action: 'webhook', rejectReason: 'no' },
    });
    expectError(change, 400, 'INVALID_INPUT');
    const control = await create(mailKey, { pattern: `y@${domain}`, action: 'reject', rejectReason: 'bad\u0007bell' });
    expectError(control, 400, 'INVALID_INPUT');
  });

  it("a pattern must be on one of the account's receiving domains, and well formed", async () => {
    const { mailKey, domain } = await receivingAccount();
    const other = await receivingAccount();
    for (const pattern of [`support@${other.domain}`, 'support@example.com', `sup*port@${domain}`, 'support']) {
      const res = await create(mailKey, { pattern, action: 'store' });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.details?.[0]?.path).toBe('pattern');
    }
  });

  it('one route per pattern (409 INBOUND_ROUTE_EXISTS); exact, sub-address and any are three patterns', async () => {
    const { mailKey, domain } = await receivingAccount();
    for (const pattern of [`support@${domain}`, `support+*@${domain}`, `*@${domain}`]) {
      expect((await create(mailKey, { pattern, action: 'store' })).status).toBe(201);
    }
    expectError(
      await create(mailKey, { pattern: `SUPPORT@${domain}`, action: 'webhook' }),
      409,
      'INBOUND_ROUTE_EXISTS',
    );
  });

  it("routes are the account's own: another account's key sees 404", async () => {
    const { mailKey, domain } = await receivingAccount();
    const other = await receivingAccount();
    const { id } = (await create(mailKey, { pattern: `support@${domain}`, action: 'store' })).json.data;
    for (const method of ['GET', 'DELETE']) {
      expectError(
        await call(method, `/api/v1/inbound/routes/${id}`, { token: other.mailKey }),
        404,
        'INBOUND_ROUTE_NOT_FOUND',
      );
    }
    const change = await call('PATCH', `/api/v1/inbound/routes/${id}`, {
      token: other.mailKey,
      body: { action: 'reject' },
    });
    expectError(change, 404, 'INBOUND_ROUTE_NOT_FOUND');
    expect(
      (await call<{ routes: Route[] }>('GET', '/api/v1/inbound/routes', { token: other.mailKey })).json.data.routes,
    ).toEqual([]);
  });

  it('at most 100 routes per account: the 101st is 409 INBOUND_ROUTE_LIMIT_REACHED', async () => {
    const { mailKey, domain } = await receivingAccount();
    for (let i = 0; i < 100; i++) {
      expect((await create(mailKey, { pattern: `box${i}@${domain}`, action: 'store' })).status).toBe(201);
    }
    expectError(
      await create(mailKey, { pattern: `box100@${domain}`, action: 'store' }),
      409,
      'INBOUND_ROUTE_LIMIT_REACHED',
    );
  }, 60_000);
});
