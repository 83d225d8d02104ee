// What `npm start` (scripts/start.mjs) prints: a bad variable is one line and an exit before anything
// starts; a good start says in one line what the migrations did, and wrangler warns about nothing.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, spawnStartScript } from './local-service';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Run = { child: ChildProcess; lines: string[]; exited: Promise<number | null> };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'postcode-start-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true, maxRetries: 3 }));
  return dir;
}

/** Runs scripts/start.mjs in its own process group (no inbox, own ports), collecting its output lines. */
async function startScript(dir: string, env: Record<string, string> = {}): Promise<Run> {
  const child = spawnStartScript({
    PORT: String(await freePort()),
    POSTCODE_SMTP_PORT: String(await freePort()),
    POSTCODE_STATE_DIR: dir,
    POSTCODE_NO_INBOX: '1',
    POSTCODE_QUIET: '',
    POSTCODE_EXTRA_VARS: '',
    ...env,
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) =>
    lines.push(
      ...chunk
        .toString()
        .split('\n')
        .filter((line) => line.trim()),
    );
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  cleanups.push(async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {}
    await Promise.race([exited, sleep(10_000)]);
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  });
  return { child, lines, exited };
}

async function waitForLine(run: Run, pattern: RegExp, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = run.lines.find((l) => pattern.test(l));
    if (line) return line;
    if (run.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`no line matching ${pattern}:\n${run.lines.join('\n')}`);
    await sleep(100);
  }
}

describe('npm start', () => {
  it('refuses a bad variable within seconds, with one line naming it and its rule', async () => {
    const dir = await stateDir();
    const started = Date.now();
    const run = await startScript(dir, { POSTCODE_EXTRA_VARS: 'RATE_MAIL_PER_KEY:abc' });
    const code = await Promise.race([run.exited, sleep(10_000).then(() => 'still running')]);

    expect(code, run.lines.join('\n')).not.toBe('still running');
    expect(code).not.toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    const problems = run.lines.filter((line) => !line.includes('wrote .dev.vars'));
    expect(problems).toEqual([
      '[postcode] invalid configuration: RATE_MAIL_PER_KEY (POSTCODE_EXTRA_VARS): expected a whole number >= 0',
    ]);
    expect(await readdir(dir)).toEqual([]); // nothing was started: no migrations, no database
  });

  it('refuses a name the Worker does not read, and an entry that is not NAME:value', async () => {
    const run = await startScript(await stateDir(), { POSTCODE_EXTRA_VARS: 'RATE_MAIL_PER_KY:5,SMTP_PORT=25' });
    expect(await run.exited).not.toBe(0);
    expect(run.lines.filter((line) => line.includes('invalid configuration'))).toEqual([
      '[postcode] invalid configuration: POSTCODE_EXTRA_VARS: RATE_MAIL_PER_KY is not a variable of the Worker (see docs/configuration.md)',
      '[postcode] invalid configuration: POSTCODE_EXTRA_VARS: "SMTP_PORT=25" is not NAME:value',
    ]);
  });

  it('says in one line what the migrations did, and wrangler prints no warning', async () => {
    const dir = await stateDir();
    const migrations = (await readdir(join(root, 'migrations'))).filter((name) => name.endsWith('.sql'));
    const first = await startScript(dir);
    await waitForLine(first, /^\[postcode\] ready$/, 120_000);

    const applied = migrations.length === 1 ? '1 migration' : `${migrations.length} migrations`;
    expect(first.lines.filter((line) => /migration|database/i.test(line))).toEqual([`[postcode] ${applied} applied`]);
    expect(first.lines.filter((line) => /[│┌├└]/.test(line))).toEqual([]);
    expect(first.lines.filter((line) => /warn|▲/i.test(line))).toEqual([]);
    await cleanups.pop()!();

    // On the same state, the next start has nothing to apply (it is stopped once it has said so).
    const second = await startScript(dir);
    await waitForLine(second, /^\[postcode\] database up to date$/, 60_000);
  }, 180_000);
});
