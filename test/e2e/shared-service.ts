// The shared service of the e2e project (global-setup.ts) as the walk-throughs use it: its API with the demo
// mail key, and the repository's scripts run against its state directory and inbox.
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const service = inject('e2e');

/** A call with the demo account's mail key; the envelope's `data` and the status. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> {
  const res = await fetch(service.baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${service.mailKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, data: ((await res.json()) as { data: T }).data };
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
