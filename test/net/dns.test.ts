// DNS over HTTPS (src/net/dns.ts) against the resolver stub of test/support/node/dns-stub.ts.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { joinTxtData, lookup } from '../../src/net/dns';

const RESOLVER = `${env.DNS_STUB_URL}/dns-query`;

const unique = (label: string) => `${label}.${crypto.randomUUID().slice(0, 8)}.example`;

async function publish(name: string, type: 'TXT' | 'MX', data: string[]) {
  const res = await fetch(`${env.DNS_STUB_URL}/publish`, {
    method: 'POST',
    body: JSON.stringify({ name, type, data }),
  });
  expect(res.status).toBe(204);
}

describe('lookup', () => {
  it('finds a TXT record longer than 255 characters, its strings joined', async () => {
    const name = `pc2026._domainkey.${unique('shop')}`;
    const value = `v=DKIM1; k=rsa; p=${'A'.repeat(392)}`;
    await publish(name, 'TXT', [value]);
    expect(await lookup(RESOLVER, name, 'TXT')).toEqual({ kind: 'found', values: [value] });
  });

  it('finds every record of a name, and MX records as priority and host', async () => {
    const name = unique('mail');
    await publish(name, 'TXT', ['v=spf1 -all', 'another']);
    await publish(name, 'MX', ['10 bounces.postcode.example.']);
    expect(await lookup(RESOLVER, name, 'TXT')).toEqual({ kind: 'found', values: ['v=spf1 -all', 'another'] });
    expect(await lookup(RESOLVER, name, 'MX')).toEqual({ kind: 'found', values: ['10 bounces.postcode.example.'] });
  });

  it('none for a name without records (NXDOMAIN) and for a name without records of that type', async () => {
    expect(await lookup(RESOLVER, unique('nothing'), 'TXT')).toEqual({ kind: 'none' });
    const name = unique('mxonly');
    await publish(name, 'MX', ['10 mx.example.']);
    expect(await lookup(RESOLVER, name, 'TXT')).toEqual({ kind: 'none' });
  });

  it('unavailable, never an exception, when the resolver fails: SERVFAIL, HTTP 500, an answer that is not JSON', async () => {
    expect(await lookup(RESOLVER, `servfail.${unique('x')}`, 'TXT')).toEqual({
      kind: 'unavailable',
      reason: 'DNS status 2',
    });
    expect(await lookup(RESOLVER, `http500.${unique('x')}`, 'TXT')).toEqual({
      kind: 'unavailable',
      reason: 'the resolver answered HTTP 500',
    });
    // A server that is no resolver: its answer is not JSON.
    expect(await lookup(`${env.FILE_SERVER_URL}/files/10`, unique('x'), 'TXT')).toMatchObject({ kind: 'unavailable' });
  });
});

describe('joinTxtData', () => {
  it('joins quoted strings with nothing between them and reads escapes', () => {
    expect(joinTxtData('"v=DKIM1; k=rsa; " "p=MIIB"')).toBe('v=DKIM1; k=rsa; p=MIIB');
    expect(joinTxtData('"a \\"quoted\\" \\\\ word\\059"')).toBe('a "quoted" \\ word;');
    expect(joinTxtData('unquoted data')).toBe('unquoted data');
  });
});
