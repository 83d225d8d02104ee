// Starts the service the way `npm start` does (scripts/start.mjs: D1 migrations, maildev, `wrangler dev`,
// a demo account), but on free ports and in a fresh temporary state directory, so a run never touches the
// developer's `.wrangler/state` or a running `npm start`. The whole process group is stopped afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort, LocalService, type Ready } from './local-service';

export type E2eService = {
  baseUrl: string;
  inboxUrl: string;
  /** The start script's state directory and inbox port (what `npm run dkim:check` reads). */
  stateDir: string;
  inboxPort: number;
  adminToken: string;
  /** The local DNS-over-HTTPS resolver (POST /publish answers a name as a domain's owner would). */
  dnsUrl: string;
  accountId: string;
  mailKey: string;
  serverOtpKey: string;
  dashboardOwner: string;
};

declare module 'vitest' {
  export interface ProvidedContext {
    e2e: E2eService;
  }
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

export default async function setup(project: TestProject) {
  const stateDir = await mkdtemp(join(tmpdir(), 'postcode-e2e-'));
  const [port, smtpPort, inboxPort] = (await distinctFreePorts(3)) as [number, number, number];
  const service = new LocalService({ stateDir, port, smtpPort, inboxPort, vars: {}, sweepSeconds: 60 });
  // Safety net if vitest goes away without running the teardown.
  const killOnExit = () => void service.kill('SIGTERM');
  process.once('exit', killOnExit);
  const teardown = async () => {
    process.off('exit', killOnExit);
    await service.kill('SIGTERM');
    if (process.env.POSTCODE_E2E_KEEP_STATE === '1') return;
    await rm(stateDir, { recursive: true, force: true, maxRetries: 3 });
  };
  let ready: Ready;
  try {
    ready = await service.start();
  } catch (error) {
    await teardown();
    throw new Error(`e2e: ${String(error)}`);
  }
  project.provide('e2e', {
    baseUrl: ready.baseUrl,
    inboxUrl: `http://127.0.0.1:${inboxPort}`,
    stateDir,
    inboxPort,
    adminToken: ready.adminToken,
    dnsUrl: ready.dnsUrl,
    accountId: ready.accountId,
    mailKey: ready.mailKey,
    serverOtpKey: ready.serverOtpKey,
    dashboardOwner: ready.dashboardOwner,
  });
  return teardown;
}
