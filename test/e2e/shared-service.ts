// The shared service of the e2e project (global-setup.ts) as the walk-throughs use it: its API with the demo
// mail key, and the repository's scripts run against its state directory and inbox.
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const service = inject('e2e');

/** A call with a bearer token; the status and the envelope (`data` on success). */
async function call<T>(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(service.baseUrl + path, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { data: T } };
}

/** A call with the demo account's mail key; the envelope's `data` and the status. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> {
  const { status, json } = await call<T>(method, path, service.mailKey, body);
  return { status, data: json.data };
}

/** A call that must succeed (any 2xx): its `data`. */
export async function succeeded<T>(method: string, path: string, token: string, body?: unknown): Promise<T> {
  const { status, json } = await call<T>(method, path, token, body);
  if (status >= 300) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(json)}`);
  return json.data;
}

type DnsRecord = { name: string; type: string; value: string; priority?: number };

/** Publishes a domain's records in the service's local resolver, as the domain's owner would. */
export async function publishRecords(records: DnsRecord[]): Promise<void> {
  for (const r of records) {
    const data = [r.type === 'MX' ? `${r.priority} ${r.value}.` : r.value];
    const res = await fetch(`${service.dnsUrl}/publish`, { method: 'POST', body: JSON.stringify({ ...r, data }) });
    if (!res.ok) throw new Error(`publish ${r.name} ${r.type}: ${res.status}`);
  }
}

/** `node scripts/<script> …args` as `npm run` runs it, against this service's state and inbox. */
export function runScript(script: string, ...args: string[]) {
  const run = spawnSync(process.execPath, [`scripts/${script}`, ...args], {
    cwd: root,
    env: { ...process.env, POSTCODE_STATE_DIR: service.stateDir, POSTCODE_INBOX_PORT: String(service.inboxPort) },
    encoding: 'utf8',
  });
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}
