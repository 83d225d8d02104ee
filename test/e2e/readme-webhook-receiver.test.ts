// The webhook receiver of docs/webhooks.md ("A receiver"), taken from the doc as written and run with plain Node
// against the running service's real, signed deliveries.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from './local-service';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const service = inject('e2e');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The fenced block of docs/webhooks.md whose first line starts with `firstLine`. */
async function docBlock(firstLine: string): Promise<string> {
  const doc = await readFile(join(root, 'docs/webhooks.md'), 'utf8');
  const block = [...doc.matchAll(/^```\w*\n([\s\S]*?)^```$/gm)]
    .map((match) => match[1]!)
    .find((body) => body.startsWith(firstLine));
  if (!block) throw new Error(`docs/webhooks.md has no code block starting with ${firstLine}`);
  return block;
}

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(service.baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${service.mailKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as { success: boolean; data: T };
  if (!json.success) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json.data;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function waitForLine(lines: string[], child: ChildProcess, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const line = lines.find((l) => pattern.test(l));
    if (line) return line;
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`receiver printed no line matching ${pattern}:\n${lines.join('\n')}`);
    await sleep(100);
  }
}

describe('docs/webhooks.md: the webhook receiver', () => {
  it('runs as written with plain Node, takes signed deliveries and refuses a forged one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'postcode-receiver-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'receiver.mjs'), await docBlock('// receiver.mjs'));
    // What `npm install standardwebhooks` gives the reader's directory.
    await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));

    const port = await freePort();
    const endpoint = await api<{ id: string; secret: string }>('POST', '/api/v1/webhooks', {
      url: `http://127.0.0.1:${port}/postcode`,
      events: ['email.sent'],
    });
    cleanups.push(() => api('DELETE', `/api/v1/webhooks/${endpoint.id}`));

    const receiver = spawn(process.execPath, ['receiver.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', POSTCODE_WEBHOOK_SECRET: endpoint.secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(async () => receiver.kill());
    const lines: string[] = [];
    const collect = (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean));
    receiver.stdout?.on('data', collect);
    receiver.stderr?.on('data', collect);
    await waitForLine(lines, receiver, /^listening on /);

    await api('POST', `/api/v1/webhooks/${endpoint.id}/test`);
    expect(await waitForLine(lines, receiver, /^webhook\.test /)).toBe(
      `webhook.test ${JSON.stringify({ webhookId: endpoint.id })}`,
    );
    const email = await api<{ id: string }>('POST', '/api/v1/emails', {
      to: 'ada@example.com',
      subject: 'Hi',
      text: 'For the receiver',
    });
    // Other files mail with the same account meanwhile: the line of this email.
    const sent = await waitForLine(lines, receiver, new RegExp(`^email\\.sent .*"emailId":"${email.id}"`));
    expect(JSON.parse(sent.slice('email.sent '.length))).toMatchObject({ emailId: email.id, status: 'SENT' });

    const forged = await fetch(`http://127.0.0.1:${port}/postcode`, {
      method: 'POST',
      headers: {
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,AAAA',
      },
      body: JSON.stringify({ type: 'email.sent', data: {} }),
    });
    expect(forged.status).toBe(401);

    // The receiver prints before it answers, so the log may need a moment to say delivered.
    let outcomes: [string, number | null][] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(100)) {
      const log = await api<{ deliveries: { status: string; lastStatus: number | null }[] }>(
        'GET',
        `/api/v1/webhooks/${endpoint.id}/deliveries`,
      );
      outcomes = log.deliveries.map((d) => [d.status, d.lastStatus]);
      if (outcomes.every(([status]) => status === 'delivered')) break;
    }
    expect(outcomes).toEqual([
      ['delivered', 204],
      ['delivered', 204],
    ]);
  });
});
