// A copy of the service as `npm start` runs it (scripts/start.mjs: migrations, maildev or our own SMTP
// server, `wrangler dev`, the minute's cron, a demo account), on its own ports and state directory. It can
// be SIGKILLed as a whole process group and started again on the same state.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

/** scripts/start.mjs with these variables over this process's, in its own process group (stopped as a whole). */
export function spawnStartScript(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [join(root, 'scripts/start.mjs')], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
}

export type ServiceOptions = {
  stateDir: string;
  port: number;
  smtpPort: number;
  /** Runs maildev (the inbox of `npm start`) on this port; without it, bring your own SMTP server. */
  inboxPort?: number;
  /** Worker vars (`wrangler dev --var`). */
  vars: Record<string, string>;
  sweepSeconds: number;
};

/** What scripts/start.mjs writes to postcode-ready.json. */
export type Ready = {
  baseUrl: string;
  adminToken: string;
  /** The local DNS-over-HTTPS resolver (POST /publish answers a name as a domain's owner would). */
  dnsUrl: string;
  accountId: string;
  mailKey: string;
  serverOtpKey: string;
  /** The demo account's owner in the dashboard. */
  dashboardOwner: string;
};

export class LocalService {
  private child: ChildProcess | null = null;

  constructor(readonly options: ServiceOptions) {}

  get logPath() {
    return join(this.options.stateDir, 'start.log');
  }

  /** Starts scripts/start.mjs in its own process group and waits until it is ready. */
  async start(): Promise<Ready> {
    const { stateDir, port, smtpPort, inboxPort, vars, sweepSeconds } = this.options;
    const readyFile = join(stateDir, 'postcode-ready.json');
    rmSync(readyFile, { force: true });
    const log = createWriteStream(this.logPath, { flags: 'a' });
    const child = spawnStartScript({
      PORT: String(port),
      POSTCODE_SMTP_PORT: String(smtpPort),
      POSTCODE_STATE_DIR: stateDir,
      ...(inboxPort === undefined ? { POSTCODE_NO_INBOX: '1' } : { POSTCODE_INBOX_PORT: String(inboxPort) }),
      POSTCODE_QUIET: '1',
      POSTCODE_SWEEP_SECONDS: String(sweepSeconds),
      POSTCODE_EXTRA_VARS: Object.entries(vars)
        .map(([name, value]) => `${name}:${value}`)
        .join(','),
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.child = child;
    const deadline = Date.now() + 150_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`start.mjs exited: ${this.tail()}`);
      if (Date.now() > deadline) throw new Error(`start.mjs not ready: ${this.tail()}`);
      try {
        return JSON.parse(readFileSync(readyFile, 'utf8')) as Ready;
      } catch {
        await sleep(200);
      }
    }
  }

  /** The last lines the start script printed. */
  tail(lines = 30): string {
    try {
      return readFileSync(this.logPath, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  private alive(pgid: number): boolean {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }

  /** SIGKILL of the whole process group (start script, wrangler, workerd): a crash, nothing cleaned up. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const pgid = this.child?.pid;
    if (pgid === undefined || !this.alive(pgid)) return;
    try {
      process.kill(-pgid, signal);
    } catch {}
    const deadline = Date.now() + 10_000;
    while (this.alive(pgid) && Date.now() < deadline) await sleep(100);
    if (this.alive(pgid)) process.kill(-pgid, 'SIGKILL');
    while (this.alive(pgid)) await sleep(100);
  }
}

export type ReceivedCopy = { messageId: string; envelopeTo: string[] };

/** A plain SMTP server that records the Message-ID of every message it accepts. */
export async function startRecordingSmtp(port: number): Promise<{ received: ReceivedCopy[]; close(): Promise<void> }> {
  const received: ReceivedCopy[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    disableReverseLookup: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const parsed = await simpleParser(Buffer.concat(chunks));
        received.push({
          messageId: parsed.messageId ?? '',
          envelopeTo: session.envelope.rcptTo.map((r) => r.address),
        });
        callback();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolveListen) => server.listen(port, '127.0.0.1', resolveListen));
  return { received, close: () => new Promise<void>((resolveClose) => server.close(() => resolveClose())) };
}
