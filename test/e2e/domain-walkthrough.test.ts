// The walk-through of docs/domains.md under `npm start`: add a domain, press verify (the local resolver
// publishes what the service asks for), send from it, and `npm run dkim:check` says pass (mailauth).
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const service = inject('e2e');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> {
  const res = await fetch(service.baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${service.mailKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, data: ((await res.json()) as { data: T }).data };
}

/** `npm run dkim:check -- <to>` as the walk-through runs it, against this service's inbox and resolver. */
function dkimCheck(to: string) {
  const run = spawnSync(process.execPath, ['scripts/dkim-check.mjs', to], {
    cwd: root,
    env: { ...process.env, POSTCODE_STATE_DIR: service.stateDir, POSTCODE_INBOX_PORT: String(service.inboxPort) },
    encoding: 'utf8',
  });
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}

type Domain = { id: string; name: string; status: string; records: { purpose: string; status: string }[] };

describe('docs/domains.md: the walk-through under npm start', () => {
  it('add → verify → verified → send → DKIM pass; mail from the service sender is not signed', async () => {
    const name = `walk-${crypto.randomUUID().slice(0, 8)}.example`;
    const added = await api<Domain>('POST', '/api/v1/domains', { name });
    expect(added.status).toBe(201);
    expect(added.data.status).toBe('pending');
    const verified = await api<Domain>('POST', `/api/v1/domains/${added.data.id}/verify`);
    expect(verified.data.status).toBe('verified');
    expect(verified.data.records.every((r) => r.status === 'verified')).toBe(true);

    const to = `walk-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const sent = await api('POST', '/api/v1/emails', {
      from: `Acme <hello@${name}>`,
      to,
      subject: 'Hi',
      text: 'Hello',
    });
    expect(sent.status).toBe(200);
    let check = dkimCheck(to);
    for (let i = 0; i < 50 && check.output.includes('no mail to'); i++) {
      await sleep(200);
      check = dkimCheck(to);
    }
    expect(check.output).toContain(`dkim=pass d=${name}`);
    expect(check.code).toBe(0);

    const plain = `plain-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await api('POST', '/api/v1/emails', { to: plain, subject: 'Unsigned', text: 'x' });
    let unsigned = dkimCheck(plain);
    for (let i = 0; i < 50 && unsigned.output.includes('no mail to'); i++) {
      await sleep(200);
      unsigned = dkimCheck(plain);
    }
    expect(unsigned.output).toContain('dkim=none');
    expect(unsigned.code).toBe(1);
  });
});
