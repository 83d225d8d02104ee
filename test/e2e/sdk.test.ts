// The SDK (`postcode`, built by `npm ci` into sdk/dist) where users run it, against the service as `npm start` runs
// it: a Node script sending through it; a Worker importing it, built by wrangler without nodejs_compat (its bundle
// stays under 64 KiB unminified; the size is printed) and run under `wrangler dev`; and a page of another origin in
// Chromium loading `postcode/browser` straight from sdk/dist (no bundler) to send and verify a code.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { Postcode } from 'postcode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, uniqueEmail } from './browser';
import { freePort } from './local-service';
import { type Account, nthCode, ownAccount, waitForMails } from './sdk-support';
import { service, succeeded } from './shared-service';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const fixtures = join(root, 'test/e2e/fixtures');
const wrangler = join(root, 'node_modules/.bin/wrangler');
/** wrangler needs Node 22: the project's own (the `node` devDependency) comes first, as under `npm run`. */
const wranglerEnv = {
  ...process.env,
  PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_SEND_METRICS: 'false',
};

let account: Account;
beforeAll(async () => {
  account = await ownAccount('sdk where users run it');
});

const statusOf = async (emailId: string) =>
  (await succeeded<{ status: string }>('GET', `/api/v1/emails/${emailId}`, account.mailKey)).status;

describe('the SDK where users run it', () => {
  it('a Node script sends an email through it, and the email goes out', async () => {
    const to = uniqueEmail('sdk-node');
    const run = spawnSync(process.execPath, [join(fixtures, 'sdk-node.mjs')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, POSTCODE_BASE_URL: service.baseUrl, POSTCODE_API_KEY: account.mailKey, SEND_TO: to },
    });
    expect(run.status, run.stderr).toBe(0);
    const { data, error } = JSON.parse(run.stdout) as { data: { id: string }; error: unknown };
    expect(error).toBeNull();
    expect(data.id).toMatch(/^em_/);
    await expect.poll(() => statusOf(data.id), { timeout: 30_000 }).toBe('SENT');
  });

  it('a CommonJS script requires it (no second build: Node loads the ESM through require)', () => {
    const script = `const { Postcode, verifyWebhook } = require('postcode');
const { createOtpClient } = require('postcode/browser');
console.log([typeof Postcode, typeof verifyWebhook, typeof createOtpClient].join(' '));`;
    const run = spawnSync(process.execPath, ['--input-type=commonjs', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('function function function');
  });

  it("README.md's SDK example runs as written (`node send.mjs` with PC and KEY exported)", async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const example = [...readme.matchAll(/^```js\n([\s\S]*?)^```$/gm)]
      .map((match) => match[1]!)
      .find((body) => body.startsWith("import { Postcode } from 'postcode';"));
    expect(example, 'README.md has the SDK example').toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'postcode-readme-send-'));
    try {
      writeFileSync(join(dir, 'send.mjs'), example!);
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
      // The demo account's key: the example sends from the demo sender.
      const run = spawnSync(process.execPath, ['send.mjs'], {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', PC: service.baseUrl, KEY: service.mailKey },
      });
      expect(run.status, run.stderr).toBe(0);
      const id = /id: '(em_\w+)'/.exec(run.stdout)?.[1];
      expect(run.stdout).toContain("status: 'QUEUED'");
      expect(id, run.stdout).toBeDefined();
      await expect
        .poll(
          async () => (await succeeded<{ status: string }>('GET', `/api/v1/emails/${id}`, service.mailKey)).status,
          {
            timeout: 30_000,
          },
        )
        .toBe('SENT');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a Worker importing it builds without nodejs_compat, under 64 KiB unminified', () => {
    const out = mkdtempSync(join(tmpdir(), 'postcode-sdk-worker-'));
    try {
      const build = spawnSync(
        wrangler,
        ['deploy', '--dry-run', '--outdir', out, '--config', join(fixtures, 'sdk-worker/wrangler.toml')],
        { cwd: root, encoding: 'utf8', env: wranglerEnv },
      );
      expect(build.status, build.stdout + build.stderr).toBe(0);
      const bundle = readFileSync(join(out, 'index.js'), 'utf8');
      const bytes = Buffer.byteLength(bundle);
      console.log(`a Worker sending one email through the SDK: ${bytes} bytes unminified (64 KiB = 65536 allowed)`);
      expect(bundle).toContain('Idempotency-Key'); // the SDK is in it
      expect(bundle).not.toMatch(/from ["']node:/);
      expect(bytes).toBeLessThan(64 * 1024);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('the Worker runs under `wrangler dev`: a request sends through the SDK, and the email goes out', async () => {
    const worker = await startWorker({ POSTCODE_BASE_URL: service.baseUrl, POSTCODE_API_KEY: account.mailKey });
    try {
      const to = uniqueEmail('sdk-worker');
      const res = await fetch(`${worker.url}/?to=${encodeURIComponent(to)}`);
      const body = (await res.json()) as { data: { id: string; status: string } | null; error: unknown };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body).toEqual({ data: { id: expect.stringMatching(/^em_/), status: 'QUEUED' }, error: null });
      await expect.poll(() => statusOf(body.data!.id), { timeout: 30_000 }).toBe('SENT');
      expect(await waitForMails(to, 1)).toBe(1);
    } finally {
      await worker.stop();
    }
  });
});

type Worker = { url: string; stop(): Promise<void> };

/** `wrangler dev` on the fixture, in its own process group, on free ports and a temporary state directory. */
async function startWorker(vars: Record<string, string>): Promise<Worker> {
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const persist = mkdtempSync(join(tmpdir(), 'postcode-sdk-worker-dev-'));
  const child = spawn(
    wrangler,
    [
      'dev',
      '--config',
      join(fixtures, 'sdk-worker/wrangler.toml'),
      ...['--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspectorPort)],
      ...['--persist-to', persist, '--show-interactive-dev-session=false'],
      ...Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
    ],
    { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: wranglerEnv },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Safety net should vitest go away before the test's own stop.
  const killOnExit = () => process.kill(-child.pid!, 'SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    await stopGroup(child);
    rmSync(persist, { recursive: true, force: true });
  };
  // Every request to the fixture sends an email, so readiness is wrangler's own line, not a probe.
  const ready = new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error('no "Ready on" within 45 s')), 45_000);
    const check = () => {
      if (!/Ready on http:\/\/127\.0\.0\.1:\d+/.test(output)) return;
      clearTimeout(timer);
      resolveReady();
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}`));
    });
  });
  try {
    await ready;
  } catch (error) {
    await stop();
    throw new Error(`wrangler dev did not start: ${String(error)}\n${output}`);
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}

/** SIGTERM to the whole group (wrangler, workerd), SIGKILL if it lingers; returns once none is left. */
async function stopGroup(child: ChildProcess) {
  const pgid = child.pid!;
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pgid, 'SIGTERM');
  try {
    await expect.poll(alive, { timeout: 10_000, interval: 100 }).toBe(false);
  } catch {
    process.kill(-pgid, 'SIGKILL');
    await expect.poll(alive, { timeout: 10_000, interval: 100 }).toBe(false);
  }
}

describe('postcode/browser in a page of another origin (Chromium)', () => {
  let browser: Browser;
  let site: { origin: string; requested: string[]; close(): Promise<void> };
  beforeAll(async () => {
    browser = await launchChromium();
    site = await startSite();
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it('loads the module from sdk/dist as is, sends a code and verifies it with the code from the inbox', async () => {
    expect(site.origin).not.toBe(new URL(service.baseUrl).origin);
    const page = await browser.newPage();
    await page.goto(site.origin);
    const email = uniqueEmail('sdk-page');
    // A page's own code: the client with the global fetch sends; one given `fetch: window.fetch` verifies (a page
    // passing its fetch must work too).
    const script = `(async () => {
      const { createOtpClient } = await import('/postcode/browser.js');
      const options = { token: ${JSON.stringify(account.publicToken)}, baseUrl: ${JSON.stringify(service.baseUrl)} };
      const shown = (r) => ({ data: r.data, error: r.error, requestId: r.headers?.get('X-Request-Id') ?? null });
      window.otp = createOtpClient(options);
      window.otpWithFetch = createOtpClient({ ...options, fetch: window.fetch });
      window.shown = shown;
      return shown(await window.otp.send({ email: ${JSON.stringify(email)} }));
    })()`;
    const sent = (await page.evaluate(script)) as { data: { sessionId: string; sent: boolean }; error: unknown };
    expect(sent).toEqual({
      data: { sessionId: expect.stringMatching(/^otp_/), email, sent: true, expiresAt: expect.any(String) },
      error: null,
      requestId: expect.stringMatching(/^req_/), // X-Request-Id is exposed to the page
    });
    const code = await nthCode(email, 1);
    const body = JSON.stringify({ sessionId: sent.data.sessionId, email, code });
    const verified = await page.evaluate(`window.otpWithFetch.verify(${body}).then(window.shown)`);
    expect(verified).toEqual({ data: { verified: true }, error: null, requestId: expect.stringMatching(/^req_/) });
    const session = await new Postcode(account.serverKey, { baseUrl: service.baseUrl }).otp.instant.session(
      sent.data.sessionId,
    );
    expect(session.data).toMatchObject({ status: 'verified', email });

    // The module and what it imports, and nothing else: no bare specifier, no bundler needed.
    expect([...new Set(site.requested)].sort()).toEqual(['/postcode/browser.js', '/postcode/http.js']);
    const bytes = site.requested.reduce((sum, path) => sum + readFileSync(distFile(path)).length, 0);
    console.log(`postcode/browser as a page loads it (browser.js + http.js): ${bytes} bytes unminified`);
    await page.close();
  });
});

const distFile = (path: string) => join(root, 'sdk/dist', path.slice('/postcode/'.length));

/** A site on a free loopback port: an empty page at /, and sdk/dist's .js files under /postcode/. */
async function startSite() {
  const requested: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site.test').pathname;
    if (path === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      return res.end('<!doctype html><html lang="en"><meta charset="utf-8"><title>SDK page</title></html>');
    }
    if (!/^\/postcode\/[\w-]+\.js$/.test(path)) return res.writeHead(404).end();
    requested.push(path);
    try {
      const source = readFileSync(distFile(path));
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(source);
    } catch {
      res.writeHead(404).end();
    }
  });
  const port = await freePort();
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return {
    origin: `http://127.0.0.1:${port}`,
    requested,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
