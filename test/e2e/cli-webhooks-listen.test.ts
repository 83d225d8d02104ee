// `postcode webhooks listen` as a user runs it: the built CLI against the service as `npm start` runs it, with
// WEBHOOK_ALLOW_INSECURE off (the Worker could not call a local URL if it tried). A local server verifies each
// event with the secret the CLI printed; Ctrl-C leaves no listening session behind.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-lines';
import { freePort, LocalService, type Ready } from './local-service';

let service: LocalService;
let ready: Ready;
let stateDir: string;

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> {
  const res = await fetch(ready.baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${ready.mailKey}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, data: ((await res.json()) as { data: T }).data };
}

type Received = { type: string; verified: boolean; webhookId: string };

/** The developer's local server: it verifies each event with the secret it is told, answers 204. */
async function localReceiver() {
  const received: Received[] = [];
  let secret = '';
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      try {
        new Webhook(secret).verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {}
      received.push({
        type: (JSON.parse(body) as { type: string }).type,
        verified,
        webhookId: String(req.headers['webhook-id']),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    useSecret: (value: string) => {
      secret = value;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'postcode-listen-'));
  const [port, smtpPort, inboxPort] = [await freePort(), await freePort(), await freePort()];
  service = new LocalService({
    stateDir,
    port,
    smtpPort,
    inboxPort,
    vars: { WEBHOOK_ALLOW_INSECURE: 'false' },
    sweepSeconds: 60,
  });
  ready = await service.start();
}, 180_000);

afterAll(async () => {
  await service?.kill('SIGTERM');
  await rm(stateDir, { recursive: true, force: true, maxRetries: 3 });
});

describe('postcode webhooks listen', () => {
  it('forwards signed events to a local URL the Worker never calls; Ctrl-C leaves nothing registered', async () => {
    const receiver = await localReceiver();
    // The service refuses the local URL as an endpoint: only the CLI can bring events there.
    const refused = await api('POST', '/api/v1/webhooks', { url: receiver.url, events: ['email.sent'] });
    expect(refused.status).toBe(400);

    // POSTCODE_CLI_NODE: another Node to run the CLI with (Node 20 has WebSocket only behind a flag).
    const listen = ['webhooks', 'listen', '--forward-to', receiver.url, '--events', 'email.queued,email.sent'];
    const settings = { baseUrl: ready.baseUrl, apiKey: ready.mailKey, node: process.env.POSTCODE_CLI_NODE };
    const { cli, out, exited, stderr } = runCli(listen, settings);
    try {
      await expect
        .poll(() => out[0], { timeout: 20_000 })
        .toMatchObject({ type: 'ready', secret: expect.stringMatching(/^whsec_/) });
      const start = out[0] as { secret: string; listenerId: string; events: string[] };
      expect(start.events).toEqual(['email.queued', 'email.sent']);
      receiver.useSecret(start.secret);
      await expect
        .poll(
          async () =>
            (await api<{ listeners: { listenerId: string }[] }>('GET', '/api/v1/webhook-listeners')).data.listeners,
          {
            timeout: 10_000,
          },
        )
        .toEqual([expect.objectContaining({ listenerId: start.listenerId })]);

      const sent = await api<{ id: string }>('POST', '/api/v1/emails', {
        to: `listen.${Date.now()}@example.com`,
        subject: 'Heard by the CLI',
        text: 'Hello',
      });
      expect(sent.status, JSON.stringify(sent.data)).toBe(200);
      await expect
        .poll(() => receiver.received.map((r) => `${r.type}:${r.verified}`), { timeout: 60_000 })
        .toEqual(['email.queued:true', 'email.sent:true']);
      // One line per event, with the local server's answer.
      await expect
        .poll(() => out.slice(1).map((l) => `${l.type} ${l.status}`), { timeout: 5_000 })
        .toEqual(['email.queued 204', 'email.sent 204']);
      expect(out.slice(1).map((l) => l.id)).toEqual(receiver.received.map((r) => r.webhookId));
    } finally {
      cli.kill('SIGINT');
    }
    expect(await exited, stderr()).toBe(0);
    expect(out.at(-1)).toMatchObject({ stopped: true, forwarded: 2 });
    await expect
      .poll(async () => (await api<{ listeners: unknown[] }>('GET', '/api/v1/webhook-listeners')).data.listeners, {
        timeout: 10_000,
      })
      .toEqual([]);
    await receiver.close();
  }, 150_000);
});
