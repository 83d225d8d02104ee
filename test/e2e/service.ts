// Private copies of the service as `npm start` runs it (scripts/start.mjs: D1 migrations, `wrangler dev`,
// the outbox sweep, a demo account), each on its own ports and state directory and with a recording SMTP
// server of the test's own instead of maildev. A copy can be SIGKILLed as a whole process group (a crash:
// nothing is cleaned up) and started again on the same state.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const READY_TIMEOUT_MS = 150_000;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port that is free right now (bound to port 0 on 127.0.0.1, then released). */
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

export async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/**
 * Live members of a process group. Zombies do not count: the start script's children are re-parented when
 * it dies, and whoever reaps them may take a while (kill(-pgid, 0) would still succeed meanwhile).
 */
function groupMembers(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const members: number[] = [];
  for (const pid of entries) {
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may contain spaces and parentheses.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(pid));
    } catch {} // gone meanwhile
  }
  return members;
}

export type ServiceOptions = {
  stateDir: string;
  port: number;
  smtpPort: number;
  /** Worker vars, passed as `wrangler dev --var NAME:value` (POSTCODE_EXTRA_VARS). */
  vars: Record<string, string>;
  /** How often start.mjs calls the scheduled handler (production's cron: every 60 s). */
  sweepSeconds: number;
};

export type Ready = { baseUrl: string; mailKey: string; accountId: string };

const running = new Set<number>();
// Safety net: if the test process goes away without its hooks, no service outlives it.
process.once('exit', () => {
  for (const pgid of running) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {}
  }
});

export class LocalService {
  private child: ChildProcess | null = null;

  constructor(readonly options: ServiceOptions) {}

  /** Everything the start script (and wrangler, workerd) printed, over every start. */
  get logPath(): string {
    return join(this.options.stateDir, 'start.log');
  }

  /** Starts scripts/start.mjs as the leader of its own process group and waits for postcode-ready.json. */
  async start(): Promise<Ready> {
    const { stateDir, port, smtpPort, vars, sweepSeconds } = this.options;
    const readyFile = join(stateDir, 'postcode-ready.json');
    rmSync(readyFile, { force: true }); // left by the previous run on this state
    const log = createWriteStream(this.logPath, { flags: 'a' });
    log.write(`\n===== start ${new Date().toISOString()} =====\n`);
    const child = spawn(process.execPath, [join(root, 'scripts/start.mjs')], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PORT: String(port),
        POSTCODE_SMTP_PORT: String(smtpPort),
        POSTCODE_STATE_DIR: stateDir,
        POSTCODE_NO_INBOX: '1',
        POSTCODE_SWEEP_SECONDS: String(sweepSeconds),
        POSTCODE_EXTRA_VARS: Object.entries(vars)
          .map(([name, value]) => `${name}:${value}`)
          .join(','),
      },
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.child = child;
    if (child.pid !== undefined) running.add(child.pid);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`scripts/start.mjs exited before it was ready\n${this.tail()}`);
      }
      if (Date.now() > deadline) throw new Error(`scripts/start.mjs not ready in time\n${this.tail()}`);
      try {
        return JSON.parse(readFileSync(readyFile, 'utf8')) as Ready;
      } catch {
        await sleep(200); // not written yet (or not completely)
      }
    }
  }

  /** The last lines of the log, for error messages. */
  tail(lines = 40): string {
    try {
      const text = readFileSync(this.logPath, 'utf8').split('\n').slice(-lines).join('\n');
      return `--- ${this.logPath} (last ${lines} lines) ---\n${text}`;
    } catch {
      return '';
    }
  }

  /** The processes of the group now (start script, wrangler, workerd, esbuild...). */
  members(): number[] {
    const pgid = this.child?.pid;
    return pgid === undefined ? [] : groupMembers(pgid);
  }

  /** SIGKILL to the whole process group, then waits until none of it is left: a crash. */
  async crash(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** SIGTERM (the start script stops its children), SIGKILL if anything lingers after 10 s. */
  async stop(): Promise<void> {
    await this.signal('SIGTERM');
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const pgid = this.child?.pid;
    if (pgid === undefined) return;
    const send = (s: NodeJS.Signals) => {
      try {
        process.kill(-pgid, s);
      } catch {} // the group is gone already
    };
    send(signal);
    const deadline = Date.now() + 10_000;
    while (groupMembers(pgid).length > 0 && Date.now() < deadline) await sleep(100);
    if (groupMembers(pgid).length > 0) {
      send('SIGKILL');
      const last = Date.now() + 10_000;
      while (groupMembers(pgid).length > 0 && Date.now() < last) await sleep(100);
    }
    const left = groupMembers(pgid);
    if (left.length > 0) throw new Error(`process group ${pgid} still has ${left.join(', ')} after SIGKILL`);
    running.delete(pgid);
    this.child = null;
  }
}

export type ReceivedCopy = { messageId: string; envelopeTo: string[]; at: number };

export type RecordingSmtp = {
  received: ReceivedCopy[];
  /** How many copies of each Message-ID arrived. */
  copies(): Map<string, number>;
  close(): Promise<void>;
};

/** A plain SMTP server on `port` that accepts everything and records each message's Message-ID. */
export async function startRecordingSmtp(port: number): Promise<RecordingSmtp> {
  const received: ReceivedCopy[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    // No reverse DNS lookup of the client: this machine has no network to ask.
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 2_000,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', () => undefined); // the client died in the middle of DATA: nothing accepted
      stream.on('end', async () => {
        try {
          const parsed = await simpleParser(Buffer.concat(chunks));
          received.push({
            messageId: parsed.messageId ?? '',
            envelopeTo: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            at: Date.now(),
          });
          callback();
        } catch (error) {
          callback(error as Error);
        }
      });
    },
  });
  // A client SIGKILLed mid-session resets its connection; that is expected here.
  server.on('error', () => undefined);
  await new Promise<void>((resolveListen, reject) => {
    server.server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolveListen());
  });
  return {
    received,
    copies() {
      const copies = new Map<string, number>();
      for (const { messageId } of received) copies.set(messageId, (copies.get(messageId) ?? 0) + 1);
      return copies;
    },
    close: () => new Promise<void>((resolveClose) => server.close(() => resolveClose())),
  };
}
