// The OpenAPI document as the service serves it, for the scripts that check it (check-openapi.mjs) and generate
// from it (sdk-types.mjs): from a `wrangler dev` of its own (a free port, a temporary state directory, throwaway
// secrets; never the port or state of a running `npm start`), or from a service already running.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const bin = (name) => join(root, 'node_modules', '.bin', name);
// Children find the project's Node 22 (the `node` devDependency) first.
const PATH = `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;
// No telemetry, update checks or Cloudflare look-ups: the check runs offline.
export const ENV = {
  ...process.env,
  PATH,
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_SEND_METRICS: 'false',
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  DO_NOT_TRACK: '1',
  X_LOCAL_OBSERVABILITY: 'false',
};
export const DOC_PATH = '/api/v1/openapi.json';
const START_TIMEOUT_MS = 120_000;

/** A TCP port that is free on 127.0.0.1 right now. */
function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** `wrangler dev` in its own process group, so that stop() ends it with workerd and esbuild. */
export async function startService(stateDir) {
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const baseUrl = `http://127.0.0.1:${port}`;
  const migrate = spawnSync(
    bin('wrangler'),
    ['d1', 'migrations', 'apply', 'postcode', '--local', '--persist-to', stateDir],
    { cwd: root, env: { ...ENV, CI: 'true' }, encoding: 'utf8', timeout: START_TIMEOUT_MS },
  );
  if (migrate.status !== 0) throw new Error(`D1 migrations failed:\n${migrate.stdout}${migrate.stderr}`);
  const args = [
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(inspectorPort),
    '--persist-to',
    stateDir,
    '--show-interactive-dev-session=false',
    '--log-level',
    'warn',
    '--var',
    `PUBLIC_BASE_URL:${baseUrl}`,
    '--var',
    `ADMIN_TOKEN:${randomBytes(24).toString('hex')}`,
    '--var',
    `OTP_PEPPER:${randomBytes(32).toString('hex')}`,
    '--var',
    'SMTP_PASSWORD:',
  ];
  const child = spawn(bin('wrangler'), args, {
    cwd: root,
    env: ENV,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit));

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {}
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, 5_000);
    await exited;
    clearTimeout(timer);
    try {
      process.kill(-child.pid, 'SIGKILL'); // anything of the group that outlived wrangler itself
    } catch {}
  };
  return { baseUrl, stop, output: () => output, exited: () => child.exitCode !== null || child.signalCode !== null };
}

export async function waitForHealth(service) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (service.exited()) throw new Error(`wrangler dev exited before it answered:\n${service.output()}`);
    try {
      const res = await fetch(`${service.baseUrl}/health`);
      if (res.status < 500) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `wrangler dev did not answer ${service.baseUrl}/health in ${START_TIMEOUT_MS / 1000} s:\n${service.output()}`,
  );
}

export async function fetchDocument(baseUrl) {
  const res = await fetch(baseUrl + DOC_PATH);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${DOC_PATH} answered ${res.status}:\n${text.slice(0, 2000)}`);
  JSON.parse(text); // a clear failure here rather than in both linters
  return text;
}

/**
 * The served document's text: from `url` when given, else from a `wrangler dev` of its own under `stateDir`, which
 * is stopped before this returns, or when the script is interrupted meanwhile.
 */
export async function servedDocument({ url, stateDir, log }) {
  if (url) {
    log(`fetching ${url}${DOC_PATH}`);
    return fetchDocument(url.replace(/\/$/, ''));
  }
  log('starting wrangler dev (own port and state directory)');
  const service = await startService(stateDir);
  const interrupted = (code) => () => service.stop().finally(() => process.exit(code));
  const signals = [
    ['SIGINT', interrupted(130)],
    ['SIGTERM', interrupted(143)],
  ];
  for (const [signal, handler] of signals) process.once(signal, handler);
  try {
    await waitForHealth(service);
    log(`fetching ${service.baseUrl}${DOC_PATH}`);
    return await fetchDocument(service.baseUrl);
  } catch (error) {
    error.message += `\nwrangler dev output:\n${service.output()}`;
    throw error;
  } finally {
    for (const [signal, handler] of signals) process.off(signal, handler);
    await service.stop();
  }
}

/** Runs a script's `main`: exits with its code, or with 1 and the error's message under `[name]`. */
export function runMain(name, main) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      console.error(`[${name}] ${error.message}`);
      process.exit(1);
    },
  );
}
