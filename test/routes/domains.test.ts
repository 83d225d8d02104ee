// Sending domains: /api/v1/domains, /{domainId}, /verify, /rotate-dkim, and their life under the scheduled checks.
import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { admin, call, expectError, newAccount } from '../support/api';
import {
  addDomain,
  type Domain,
  getDomain,
  publish,
  recordOf,
  uniqueDomain,
  unpublish,
  verifiedDomain,
  verifyDomain,
} from '../support/domains';
import { newWebhook, waitForEvents } from '../support/webhooks';

const tick = () => worker.scheduled(createScheduledController(), env);

/** Moves a domain's next check (and, given, its creation) into the past, so the next tick checks it. */
async function makeDue(id: string, createdHoursAgo?: number) {
  await env.DB.prepare('UPDATE domains SET next_check_at = 0 WHERE id = ?').bind(id).run();
  if (createdHoursAgo !== undefined) {
    const createdAt = new Date(Date.now() - createdHoursAgo * 3_600_000).toISOString();
    await env.DB.prepare('UPDATE domains SET created_at = ? WHERE id = ?').bind(createdAt, id).run();
  }
}

async function testKey(accountId: string) {
  const res = await admin<{ key: string }>('POST', `/admin/v1/accounts/${accountId}/api-keys`, {
    scopes: ['mail_api'],
    mode: 'test',
  });
  return res.json.data.key;
}

describe('POST /api/v1/domains', () => {
  it('adds a pending domain with a 2048-bit DKIM key and the records to publish', async () => {
    const { mailKey } = await newAccount();
    const name = uniqueDomain();
    const res = await call<Domain>('POST', '/api/v1/domains', { token: mailKey, body: { name: name.toUpperCase() } });
    expect(res.status).toBe(201);
    const domain = res.json.data;
    expect(domain).toEqual({
      id: expect.stringMatching(/^dom_/),
      name,
      status: 'pending',
      records: [
        {
          purpose: 'dkim',
          type: 'TXT',
          name: expect.stringMatching(new RegExp(`^pc[a-z2-7]{8}\\._domainkey\\.${name.replace(/\./g, '\\.')}$`)),
          value: expect.stringMatching(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/),
          status: 'pending',
        },
        {
          purpose: 'return_path_mx',
          type: 'MX',
          name: `pc-bounces.${name}`,
          value: 'mx.postcode.test',
          priority: 10,
          status: 'pending',
        },
        {
          purpose: 'return_path_spf',
          type: 'TXT',
          name: `pc-bounces.${name}`,
          value: 'v=spf1 include:spf.relay.test -all',
          status: 'pending',
        },
        { purpose: 'dmarc', type: 'TXT', name: `_dmarc.${name}`, value: 'v=DMARC1; p=none;', status: 'pending' },
      ],
      inbound: null,
      createdAt: expect.any(String),
    });
    const spki = recordOf(domain, 'dkim').value.split('p=')[1]!;
    const key = await crypto.subtle.importKey(
      'spki',
      Uint8Array.from(atob(spki), (c) => c.charCodeAt(0)),
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      true,
      ['verify'],
    );
    expect((key.algorithm as { modulusLength: number }).modulusLength).toBe(2048);
    // The private key is stored sealed, never as PKCS#8 in the clear.
    const row = await env.DB.prepare('SELECT sealed_private_key FROM dkim_selectors WHERE domain_id = ?')
      .bind(domain.id)
      .first<{ sealed_private_key: string }>();
    expect(row!.sealed_private_key).toMatch(/^v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    expect(row!.sealed_private_key).not.toContain('MIIE');
  });

  it('an internationalized name is kept as punycode', async () => {
    const { mailKey } = await newAccount();
    const label = crypto.randomUUID().slice(0, 6);
    const domain = await addDomain(mailKey, `bücher-${label}.example`);
    expect(domain.name).toBe(new URL(`http://bücher-${label}.example`).hostname);
    expect(domain.name.startsWith('xn--')).toBe(true);
  });

  it('refuses malformed names with 400: IP literals, localhost, too long, long labels, underscores', async () => {
    const { mailKey } = await newAccount();
    for (const name of [
      '192.0.2.1',
      '[2001:db8::1]',
      'localhost',
      'mail.localhost',
      // 254 characters: one more than a name may have.
      `${'a'.repeat(61)}.${'b'.repeat(61)}.${'c'.repeat(61)}.${'d'.repeat(61)}.exampl`,
      `${'a'.repeat(64)}.example`,
      'under_score.example',
      'nodot',
      '',
      'a b.example',
    ]) {
      const res = await call('POST', '/api/v1/domains', { token: mailKey, body: { name } });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message, name).toMatch(/^name: /);
    }
  });

  it('409 DOMAIN_TAKEN when the account already has the name', async () => {
    const { mailKey } = await newAccount();
    const name = uniqueDomain();
    await addDomain(mailKey, name);
    expectError(await call('POST', '/api/v1/domains', { token: mailKey, body: { name } }), 409, 'DOMAIN_TAKEN');
  });

  it('a test key is refused: 403 SCOPE_REQUIRED', async () => {
    const { accountId } = await newAccount();
    const res = await call('POST', '/api/v1/domains', {
      token: await testKey(accountId),
      body: { name: uniqueDomain() },
    });
    expectError(res, 403, 'SCOPE_REQUIRED');
  });
});

describe('GET /api/v1/domains', () => {
  it("lists the account's domains, newest first, paged", async () => {
    const { mailKey } = await newAccount();
    const first = await addDomain(mailKey);
    const second = await addDomain(mailKey);
    const res = await call<{ domains: Domain[]; total: number }>('GET', '/api/v1/domains?limit=1', { token: mailKey });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ total: 2, totalPages: 2, page: 1 });
    expect(res.json.data.domains).toEqual([
      { id: second.id, name: second.name, status: 'pending', createdAt: second.createdAt },
    ]);
    const next = await call<{ domains: Domain[] }>('GET', '/api/v1/domains?page=2&limit=1', { token: mailKey });
    expect(next.json.data.domains.map((d) => d.id)).toEqual([first.id]);
  });
});

describe('GET /api/v1/domains/{domainId}', () => {
  it('answers the domain with its records; another account gets 404 DOMAIN_NOT_FOUND', async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const domain = await addDomain(owner.mailKey);
    expect((await getDomain(owner.mailKey, domain.id)).json.data).toEqual(domain);
    expectError(await getDomain(other.mailKey, domain.id), 404, 'DOMAIN_NOT_FOUND');
    expectError(await verifyDomain(other.mailKey, domain.id), 404, 'DOMAIN_NOT_FOUND');
  });
});

describe('DELETE /api/v1/domains/{domainId}', () => {
  it('removes the domain; then 404, and another account cannot remove it', async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const domain = await addDomain(owner.mailKey);
    expectError(
      await call('DELETE', `/api/v1/domains/${domain.id}`, { token: other.mailKey }),
      404,
      'DOMAIN_NOT_FOUND',
    );
    const res = await call('DELETE', `/api/v1/domains/${domain.id}`, { token: owner.mailKey });
    expect(res.json).toEqual({ success: true, data: { id: domain.id, deleted: true } });
    expectError(await getDomain(owner.mailKey, domain.id), 404, 'DOMAIN_NOT_FOUND');
  });
});

describe('POST /api/v1/domains/{domainId}/verify', () => {
  it('pending until the records are published; then verified with every record verified', async () => {
    const { mailKey } = await newAccount();
    const domain = await addDomain(mailKey);
    const before = await verifyDomain(mailKey, domain.id);
    expect(before.json.data.status).toBe('pending');
    expect(before.json.data.records.every((r) => r.status === 'pending')).toBe(true);
    await publish(domain.records);
    const after = await verifyDomain(mailKey, domain.id);
    expect(after.status).toBe(200);
    expect(after.json.data.status).toBe('verified');
    expect(after.json.data.records.map((r) => r.status)).toEqual(['verified', 'verified', 'verified', 'verified']);
  });

  it('DKIM without the return path: partially_verified; any valid DMARC record counts', async () => {
    const { mailKey } = await newAccount();
    const domain = await addDomain(mailKey);
    await publish([
      recordOf(domain, 'dkim'),
      { ...recordOf(domain, 'dmarc'), value: 'v=DMARC1; p=reject; rua=mailto:d@x.example' },
    ]);
    const res = await verifyDomain(mailKey, domain.id);
    expect(res.json.data.status).toBe('partially_verified');
    expect(Object.fromEntries(res.json.data.records.map((r) => [r.purpose, r.status]))).toEqual({
      dkim: 'verified',
      return_path_mx: 'pending',
      return_path_spf: 'pending',
      dmarc: 'verified',
    });
  });

  it('a DKIM record split into several strings, or with spaces in p=, is found', async () => {
    const { mailKey } = await newAccount();
    const domain = await addDomain(mailKey);
    const dkim = recordOf(domain, 'dkim');
    const [head, key] = dkim.value.split('p=');
    // The stub splits TXT data into 255-character strings; spaces inside p= are allowed by RFC 6376.
    await publish([{ ...dkim, value: `${head}p=${key!.slice(0, 100)} ${key!.slice(100)}` }]);
    expect((await verifyDomain(mailKey, domain.id)).json.data.status).toBe('partially_verified');
  });

  it("another account's key at the selector does not count", async () => {
    const a = await newAccount();
    const domain = await addDomain(a.mailKey);
    const stranger = await addDomain(a.mailKey);
    await publish([{ ...recordOf(domain, 'dkim'), value: recordOf(stranger, 'dkim').value }]);
    expect((await verifyDomain(a.mailKey, domain.id)).json.data.status).toBe('pending');
  });

  it('409 DOMAIN_TAKEN when another account holds the name verified; it stays pending', async () => {
    const holder = await newAccount();
    const other = await newAccount();
    const name = uniqueDomain();
    await verifiedDomain(holder.mailKey, name);
    const second = await addDomain(other.mailKey, name);
    await publish([recordOf(second, 'dkim')]);
    expectError(await verifyDomain(other.mailKey, second.id), 409, 'DOMAIN_TAKEN');
    expect((await getDomain(other.mailKey, second.id)).json.data.status).toBe('pending');
  });

  it('a resolver that does not answer changes nothing', async () => {
    const { mailKey } = await newAccount();
    const domain = await verifiedDomain(mailKey);
    const res = await call<Domain>('POST', `/api/v1/domains/${domain.id}/verify`, {
      token: mailKey,
      bindings: { ...env, DNS_RESOLVER_URL: `${env.DNS_STUB_URL}/not-a-resolver` },
    });
    expect(res.status).toBe(200);
    expect(res.json.data.status).toBe('verified');
  });
});

describe('POST /api/v1/domains/{domainId}/rotate-dkim', () => {
  it('adds a pending selector; signing moves to it once found; the old one stays listed for the overlap', async () => {
    const { mailKey } = await newAccount();
    const domain = await verifiedDomain(mailKey);
    const rotated = await call<Domain>('POST', `/api/v1/domains/${domain.id}/rotate-dkim`, { token: mailKey });
    expect(rotated.status).toBe(200);
    const dkim = rotated.json.data.records.filter((r) => r.purpose === 'dkim');
    expect(dkim.map((r) => r.status)).toEqual(['verified', 'pending']);
    expect(rotated.json.data.status).toBe('verified');
    // Rotating again while one is pending changes nothing.
    const again = await call<Domain>('POST', `/api/v1/domains/${domain.id}/rotate-dkim`, { token: mailKey });
    expect(again.json.data.records.filter((r) => r.purpose === 'dkim')).toEqual(dkim);
    await publish([dkim[1]!]);
    const verified = await verifyDomain(mailKey, domain.id);
    expect(verified.json.data.records.filter((r) => r.purpose === 'dkim').map((r) => r.status)).toEqual([
      'verified',
      'verified',
    ]);
    const rows = await env.DB.prepare(
      'SELECT selector, retires_at FROM dkim_selectors WHERE domain_id = ? ORDER BY created_at',
    )
      .bind(domain.id)
      .all<{ selector: string; retires_at: number | null }>();
    const [old, current] = rows.results;
    expect(old!.retires_at! - Date.now()).toBeGreaterThan(6.9 * 24 * 3_600_000);
    expect(current!.retires_at).toBeNull();
    // Past the overlap the old selector is gone from the records.
    await env.DB.prepare('UPDATE dkim_selectors SET retires_at = 1 WHERE domain_id = ? AND selector = ?')
      .bind(domain.id, old!.selector)
      .run();
    const later = await verifyDomain(mailKey, domain.id);
    expect(later.json.data.records.filter((r) => r.purpose === 'dkim').map((r) => r.name)).toEqual([dkim[1]!.name]);
  });
});

describe('scheduled checks', () => {
  it('a pending domain is verified by the scheduled check once its records show, with domain.verified', async () => {
    const { mailKey } = await newAccount();
    const { key } = await newWebhook(mailKey, ['domain.verified', 'domain.failed']);
    const domain = await addDomain(mailKey);
    await publish(domain.records);
    await makeDue(domain.id);
    await tick();
    expect((await getDomain(mailKey, domain.id)).json.data.status).toBe('verified');
    const [event] = await waitForEvents(key, ['domain.verified']);
    expect(event!.payload.data).toEqual({ domainId: domain.id, name: domain.name, status: 'verified' });
  });

  it('a verified domain whose DKIM record disappears fails at its daily check, with domain.failed', async () => {
    const { mailKey } = await newAccount();
    const { key } = await newWebhook(mailKey, ['domain.failed']);
    const domain = await verifiedDomain(mailKey);
    await unpublish(recordOf(domain, 'dkim').name, 'TXT');
    await tick();
    expect((await getDomain(mailKey, domain.id)).json.data.status).toBe('verified');
    await makeDue(domain.id);
    await tick();
    const failed = (await getDomain(mailKey, domain.id)).json.data;
    expect(failed.status).toBe('failed');
    expect(recordOf(failed, 'dkim').status).toBe('failed');
    const [event] = await waitForEvents(key, ['domain.failed']);
    expect(event!.payload.data).toMatchObject({ domainId: domain.id, status: 'failed' });
    // Sending from it is refused from now on.
    const refused = await call('POST', '/api/v1/emails', {
      token: mailKey,
      body: { from: `a@${domain.name}`, to: 'ada@example.com', subject: 'x', text: 'x' },
    });
    expectError(refused, 403, 'SENDER_NOT_VERIFIED');
    expect(refused.json.error.message).toBe(`from: the domain ${domain.name} is not verified (status failed)`);
  });

  it('a pending domain fails 72 h after it was added without its DKIM record', async () => {
    const { mailKey } = await newAccount();
    const young = await addDomain(mailKey);
    const old = await addDomain(mailKey);
    await makeDue(young.id, 71);
    await makeDue(old.id, 73);
    await tick();
    expect((await getDomain(mailKey, young.id)).json.data.status).toBe('pending');
    expect((await getDomain(mailKey, old.id)).json.data.status).toBe('failed');
  });

  it('pending checks back off; a verified domain is checked again a day later', async () => {
    const { mailKey } = await newAccount();
    const domain = await addDomain(mailKey);
    const next = async () =>
      (await env.DB.prepare('SELECT next_check_at FROM domains WHERE id = ?')
        .bind(domain.id)
        .first<{ next_check_at: number }>())!.next_check_at - Date.now();
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      await verifyDomain(mailKey, domain.id);
      waits.push(await next());
    }
    expect(waits[1]! / waits[0]!).toBeCloseTo(2, 1);
    expect(waits[2]! / waits[1]!).toBeCloseTo(2, 1);
    await publish(domain.records);
    await verifyDomain(mailKey, domain.id);
    expect(Math.round((await next()) / 3_600_000)).toBe(24);
  });
});
