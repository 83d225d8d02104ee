// Sending domains in tests: add one, publish its records in the DNS stub (as its owner would), check it.
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { type ApiResponse, call } from './api';

export type DomainRecord = {
  purpose: 'dkim' | 'return_path_mx' | 'return_path_spf' | 'dmarc' | 'inbound_mx';
  type: 'TXT' | 'MX';
  name: string;
  value: string;
  priority?: number;
  status: 'pending' | 'verified' | 'failed';
};
export type Domain = { id: string; name: string; status: string; records: DomainRecord[]; createdAt: string };

/** A domain name no other test uses (a verified name is held by one account across the whole run). */
export const uniqueDomain = (prefix = 'acme') => `${prefix}-${crypto.randomUUID().slice(0, 10)}.example`;

export async function addDomain(token: string, name = uniqueDomain()): Promise<Domain> {
  const res = await call<Domain>('POST', '/api/v1/domains', { token, body: { name } });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json.data;
}

export const verifyDomain = (token: string, id: string): Promise<ApiResponse<Domain>> =>
  call<Domain>('POST', `/api/v1/domains/${id}/verify`, { token });

export const getDomain = (token: string, id: string): Promise<ApiResponse<Domain>> =>
  call<Domain>('GET', `/api/v1/domains/${id}`, { token });

async function stub(path: '/publish' | '/unpublish', body: object): Promise<void> {
  const res = await fetch(`${env.DNS_STUB_URL}${path}`, { method: 'POST', body: JSON.stringify(body) });
  expect(res.ok).toBe(true);
}

/** Publishes records as their owner would: records of one name and type together (MX as `priority host.`). */
export async function publish(records: DomainRecord[]): Promise<void> {
  const groups = new Map<string, { name: string; type: string; data: string[] }>();
  for (const record of records) {
    const key = `${record.name} ${record.type}`;
    const group = groups.get(key) ?? { name: record.name, type: record.type, data: [] };
    group.data.push(record.type === 'MX' ? `${record.priority} ${record.value}.` : record.value);
    groups.set(key, group);
  }
  for (const group of groups.values()) await stub('/publish', group);
}

export const unpublish = (name: string, type: 'TXT' | 'MX') => stub('/unpublish', { name, type });

export const recordOf = (domain: Domain, purpose: DomainRecord['purpose']) =>
  domain.records.find((r) => r.purpose === purpose)!;

/** A domain of the account, its records published and verified: it signs and sends. */
export async function verifiedDomain(token: string, name = uniqueDomain()): Promise<Domain> {
  const domain = await addDomain(token, name);
  await publish(domain.records);
  const res = await verifyDomain(token, domain.id);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  expect(res.json.data.status).toBe('verified');
  return res.json.data;
}
