// Starts the service the way `npm start` does (scripts/start.mjs: D1 migrations, maildev, `wrangler dev`,
// a demo account), but on free ports and in a fresh temporary state directory, so a run never touches the
// developer's `.wrangler/state` or a running `npm start`. The whole process group is stopped afterwards.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

export type E2eService = {
  baseUrl: string;
  inboxUrl: string;
  adminToken: string;
  accountId: string;
  mailKey: string;
  serverOtpKey: string;
};

declare module 'vitest' {
  export interface ProvidedContext {
    e2e: E2eService;
  }
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const READY_TIMEOUT_MS = 150_000;
const STOP_TIMEOUT_MS = 10_000;

/** A port that is free right now (bound to port 0 on 127.0.0.1, then released). */
async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the start script's process group (it forwards to maildev and wrangler), SIGKILL if it lingers. */
async function stopGroup(child: ChildProcess) {
  const pgid = child.pid;
  if (pgid === undefined || !groupAlive(pgid)) return;
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {}
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(100);
  if (groupAlive(pgid)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {}
  }
}

export default async function setup(project: TestProject) {
  const stateDir = await mkdtemp(join(tmpdir(), 'postcode-e2e-'));
  const [port, smtpPort, inboxPort] = await distinctFreePorts(3);
  const logPath = join(stateDir, 'start.log');
  const log = createWriteStream(logPath);

  // detached: the start script leads its own process group, so maildev, wrangler and workerd can be
  // stopped together without touching anything else.
  const child = spawn(process.execPath, [join(root, 'scripts/start.mjs')], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      POSTCODE_SMTP_PORT: String(smtpPort),
      POSTCODE_INBOX_PORT: String(inboxPort),
      POSTCODE_STATE_DIR: stateDir,
      POSTCODE_QUIET: '1',
    },
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  let exited: string | null = null;
  child.on('exit', (code, signal) => {
    exited = String(signal ?? code);
  });
  // Safety net if vitest goes away without running the teardown.
  const killOnExit = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    } catch {}
  };
  process.once('exit', killOnExit);

  const teardown = async () => {
    process.off('exit', killOnExit);
    await stopGroup(child);
    log.end();
    if (process.env.POSTCODE_E2E_KEEP_STATE === '1') return;
    await rm(stateDir, { recursive: true, force: true, maxRetries: 3 });
  };
  const fail = async (why: string): Promise<never> => {
    process.off('exit', killOnExit);
    await stopGroup(child);
    const output = existsSync(logPath) ? readFileSync(logPath, 'utf8').split('\n').slice(-40).join('\n') : '';
    await rm(stateDir, { recursive: true, force: true, maxRetries: 3 });
    throw new Error(`e2e: ${why}\n--- scripts/start.mjs output (last lines) ---\n${output}`);
  };

  const readyFile = join(stateDir, 'postcode-ready.json');
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let ready: Omit<E2eService, 'inboxUrl'> | undefined;
  while (!ready) {
    if (exited !== null) return fail(`scripts/start.mjs exited (${exited}) before it was ready`);
    if (Date.now() > deadline) return fail(`scripts/start.mjs was not ready after ${READY_TIMEOUT_MS / 1000}s`);
    try {
      ready = JSON.parse(readFileSync(readyFile, 'utf8'));
    } catch {
      await sleep(200); // not written yet (or not completely)
    }
  }

  project.provide('e2e', {
    baseUrl: ready.baseUrl,
    inboxUrl: `http://127.0.0.1:${inboxPort}`,
    adminToken: ready.adminToken,
    accountId: ready.accountId,
    mailKey: ready.mailKey,
    serverOtpKey: ready.serverOtpKey,
  });
  return teardown;
}
