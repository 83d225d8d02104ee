// Receiving on an account's own sending domain: POST/DELETE /api/v1/domains/{domainId}/inbound, its `inbound_mx`
// record checked like the others, and mail to it taken through the email() handler for that account only.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { findDomain, saveDomain } from '../../src/store/control/domains';
import { call, expectError, fetchWith, newAccount } from '../support/api';
import {
  addDomain,
  type Domain,
  getDomain,
  publish,
  recordOf,
  uniqueDomain,
  verifiedDomain,
  verifyDomain,
} from '../support/domains';
import { inboundBytes, plainMessage } from '../support/inbound-mail';

type Receiving = Domain & { inbound: { name: string } | null };
type Addresses = { domains: { domain: string; kind: string; domainId: string | null }[] };

const enable = (token: string, id: string, body: object = {}) =>
  call<Receiving>('POST', `/api/v1/domains/${id}/inbound`, { token, body });
const disable = (token: string, id: string) => call<Receiving>('DELETE', `/api/v1/domains/${id}/inbound`, { token });

/** Hands a message to the email() handler; what it was refused with (null: taken). */
async function deliver(to: string) {
  const { message, state } = inboundBytes(plainMessage({ to }));
  await worker.email(message, env);
  return state.rejected;
}

const inboundCount = async (token: string) =>
  (await call<{ total: number }>('GET', '/api/v1/inbound', { token })).json.data.total;

describe('POST /api/v1/domains/{domainId}/inbound', () => {
  it('a verified domain receives at a subdomain: its MX record is listed, checked, and mail reaches the account', async () => {
    const { mailKey } = await newAccount();
    const domain = await verifiedDomain(mailKey);
    const res = await enable(mailKey, domain.id, { subdomain: 'Inbound' });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const name = `inbound.${domain.name}`;
    expect(res.json.data.inbound).toEqual({ name });
    // No INBOUND_MX here: the return path's MX host, which hands mail to the Worker already.
    expect(recordOf(res.json.data, 'inbound_mx')).toEqual({
      purpose: 'inbound_mx',
      type: 'MX',
      name,
      value: env.RETURN_PATH_MX,
      priority: 10,
      status: 'pending',
    });
    expect((await getDomain(mailKey, domain.id)).json.data).toEqual(res.json.data);

    await publish([recordOf(res.json.data, 'inbound_mx')]);
    const checked = await verifyDomain(mailKey, domain.id);
    expect(recordOf(checked.json.data, 'inbound_mx').status).toBe('verified');
    expect(checked.json.data.status).toBe('verified');

    const addresses = await call<Addresses>('GET', '/api/v1/inbound/addresses', { token: mailKey });
    expect(addresses.json.data.domains.at(-1)).toEqual({ domain: name, kind: 'domain', domainId: domain.id });
    // Routes take patterns on it; mail no route matches is refused as on any receiving domain.
    expect(await deliver(`help@${name}`)).toMatch(/^5\.1\.1 /);
    const route = await call('POST', '/api/v1/inbound/routes', {
      token: mailKey,
      body: { pattern: `help@${name.toUpperCase()}`, action: 'store' },
    });
    expect(route.status, JSON.stringify(route.json)).toBe(201);
    expect(await deliver(`Help@${name}`)).toBeNull();
    expect(await inboundCount(mailKey)).toBe(1);
  });

  it('without a subdomain the domain itself receives; a second call moves receiving', async () => {
    const { mailKey } = await newAccount();
    const domain = await verifiedDomain(mailKey);
    expect((await enable(mailKey, domain.id)).json.data.inbound).toEqual({ name: domain.name });
    const moved = await enable(mailKey, domain.id, { subdomain: 'mail.in' });
    expect(moved.json.data.inbound).toEqual({ name: `mail.in.${domain.name}` });
    expect(moved.json.data.records.filter((r) => r.purpose === 'inbound_mx')).toHaveLength(1);
    await call('POST', '/api/v1/inbound/routes', {
      token: mailKey,
      body: { pattern: `*@${domain.name}`, action: 'store' },
    }).then((r) => expect(r.status).toBe(400));
  });

  it("a check that read the name before a move does not overwrite the moved name's record", async () => {
    const { accountId, mailKey } = await newAccount();
    const domain = await verifiedDomain(mailKey);
    await enable(mailKey, domain.id, { subdomain: 'old' });
    const seenByCheck = (await findDomain(env.DB, accountId, domain.id))!;
    const moved = (await enable(mailKey, domain.id, { subdomain: 'new' })).json.data;
    const row = () =>
      env.DB.prepare('SELECT inbound_status, next_check_at FROM domains WHERE id = ?').bind(domain.id).first();
    const afterMove = await row();
    await saveDomain(
      env.DB,
      { ...seenByCheck, inboundStatus: 'verified', nextCheckAt: Date.now() + 86_400_000 },
      Date.now(),
    );
    expect(await row()).toEqual(afterMove);
    expect(recordOf(moved, 'inbound_mx')).toMatchObject({ name: `new.${domain.name}`, status: 'pending' });
  });

  it('409 before the domain signs, 404 for another account, 400 for the return path subdomain', async () => {
    const { mailKey } = await newAccount();
    const pending = await addDomain(mailKey);
    expectError(await enable(mailKey, pending.id), 409, 'DOMAIN_NOT_VERIFIED');
    const other = await newAccount();
    expectError(await enable(other.mailKey, pending.id), 404, 'DOMAIN_NOT_FOUND');
    expectError(await disable(other.mailKey, pending.id), 404, 'DOMAIN_NOT_FOUND');
    const domain = await verifiedDomain(mailKey);
    // A name starting with the return path's label is the bounce reader's; one below it is not.
    expectError(await enable(mailKey, domain.id, { subdomain: 'pc-bounces' }), 400, 'INVALID_INPUT');
    expectError(await enable(mailKey, domain.id, { subdomain: 'pc-bounces.in' }), 400, 'INVALID_INPUT');
    expect((await enable(mailKey, domain.id, { subdomain: 'in.pc-bounces' })).status).toBe(200);
    expectError(await enable(mailKey, domain.id, { subdomain: '-bad' }), 400, 'INVALID_INPUT');
    expectError(await enable(mailKey, domain.id, { subdomain: 'x', extra: 1 }), 400, 'INVALID_INPUT');
    expectError(
      await enable(mailKey, domain.id, { subdomain: `${'a'.repeat(60)}.`.repeat(4).concat('a') }),
      400,
      'INVALID_INPUT',
    );
  });

  it('the most specific holder owns a name: turned on later, it takes the name over', async () => {
    const parent = uniqueDomain('over');
    const wide = await newAccount();
    const parentDomain = await verifiedDomain(wide.mailKey, parent);
    expect((await enable(wide.mailKey, parentDomain.id, { subdomain: 'shop' })).status).toBe(200);
    const narrow = await newAccount();
    const shop = await verifiedDomain(narrow.mailKey, `shop.${parent}`);
    expect((await enable(narrow.mailKey, shop.id)).status).toBe(200);
    const listed = async (token: string) =>
      (await call<Addresses>('GET', '/api/v1/inbound/addresses', { token })).json.data.domains.map((d) => d.domain);
    expect(await listed(narrow.mailKey)).toContain(`shop.${parent}`);
    expect(await listed(wide.mailKey)).not.toContain(`shop.${parent}`);
    await call('POST', '/api/v1/inbound/routes', {
      token: narrow.mailKey,
      body: { pattern: `*@shop.${parent}`, action: 'store' },
    });
    expect(await deliver(`orders@shop.${parent}`)).toBeNull();
    expect(await inboundCount(narrow.mailKey)).toBe(1);
    expect(await inboundCount(wide.mailKey)).toBe(0);
    // And the wide one cannot take it back, nor a name under it.
    expectError(await enable(wide.mailKey, parentDomain.id, { subdomain: 'a.shop' }), 409, 'DOMAIN_TAKEN');
  });

  it('409 DOMAIN_TAKEN when another account receives at the name; its mail stays with that account', async () => {
    const parent = uniqueDomain('shared');
    const first = await newAccount();
    const holder = await verifiedDomain(first.mailKey, `in.${parent}`);
    expect((await enable(first.mailKey, holder.id)).status).toBe(200);
    const second = await newAccount();
    const domain = await verifiedDomain(second.mailKey, parent);
    expectError(await enable(second.mailKey, domain.id, { subdomain: 'in' }), 409, 'DOMAIN_TAKEN');
    await call('POST', '/api/v1/inbound/routes', {
      token: first.mailKey,
      body: { pattern: `*@in.${parent}`, action: 'store' },
    });
    expect(await deliver(`anyone@in.${parent}`)).toBeNull();
    expect(await inboundCount(first.mailKey)).toBe(1);
    expect(await inboundCount(second.mailKey)).toBe(0);
  });

  it('503 INBOUND_NOT_CONFIGURED without an MX host for customers’ domains', async () => {
    const { mailKey } = await newAccount();
    const domain = await verifiedDomain(mailKey);
    const res = await fetchWith(
      { RETURN_PATH_MX: '', INBOUND_MX: '' },
      'POST',
      `/api/v1/domains/${domain.id}/inbound`,
      {
        token: mailKey,
        body: {},
      },
    );
    expectError(res, 503, 'INBOUND_NOT_CONFIGURED');
  });
});

describe('DELETE /api/v1/domains/{domainId}/inbound', () => {
  it('stops receiving: the record goes, mail to it is refused, the routes stay', async () => {
    const { mailKey } = await newAccount();
    const domain = await verifiedDomain(mailKey);
    const name = (await enable(mailKey, domain.id, { subdomain: 'in' })).json.data.inbound!.name;
    await call('POST', '/api/v1/inbound/routes', { token: mailKey, body: { pattern: `*@${name}`, action: 'store' } });
    const schedule = () =>
      env.DB.prepare('SELECT next_check_at FROM domains WHERE id = ?').bind(domain.id).first('next_check_at');
    const before = await schedule();
    const off = await disable(mailKey, domain.id);
    // Turning receiving off leaves the domain's checks where they were.
    expect(await schedule()).toBe(before);
    expect(off.status).toBe(200);
    expect(off.json.data.inbound).toBeNull();
    expect(off.json.data.records.map((r) => r.purpose)).not.toContain('inbound_mx');
    expect((await disable(mailKey, domain.id)).json.data).toEqual(off.json.data);
    expect(await deliver(`ada@${name}`)).not.toBeNull();
    expect(await inboundCount(mailKey)).toBe(0);
    const routes = await call<{ routes: unknown[] }>('GET', '/api/v1/inbound/routes', { token: mailKey });
    expect(routes.json.data.routes).toHaveLength(1);
  });
});
