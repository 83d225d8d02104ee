// What the bench starts: the counting SMTP sink, postcode (the way `npm start` does) and the probe Worker
// (scripts/bench/probe, the floors), each in its own process group on its own ports and state directory.
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PORT = 8797;
export const PROBE_PORT = 8798;
export const SMTP_PORT = 2526;
const SINK_HTTP_PORT = 2527;

export async function startSink(root) {
  const child = fork(join(root, 'scripts/bench/sink.mjs'), [String(SMTP_PORT), String(SINK_HTTP_PORT)], {
    stdio: 'inherit',
  });
  await new Promise((resolvePromise, reject) => {
    child.once('message', resolvePromise);
    child.once('exit', () => reject(new Error('the SMTP sink exited')));
  });
  const get = async (path) => (await fetch(`http://127.0.0.1:${SINK_HTTP_PORT}${path}`)).json();
  return {
    child,
    counts: () => get('/counts'),
    arrivals: () => get('/arrivals'),
    otpCodes: () => get('/otp-codes'),
    reset: () => fetch(`http://127.0.0.1:${SINK_HTTP_PORT}/reset`, { method: 'POST' }),
  };
}

// wrangler dev's local trace explorer writes every invocation (each D1 and Durable Object call included) to
// SQLite on the request path; production has no such cost, so the bench turns it off for both Workers
// unless BENCH_LOCAL_OBSERVABILITY=1 asks to measure with it.
const wranglerEnv = () => ({
  ...process.env,
  X_LOCAL_OBSERVABILITY: process.env.BENCH_LOCAL_OBSERVABILITY === '1' ? 'true' : 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_SEND_METRICS: 'false',
});

/** postcode through scripts/start.mjs, rate limits lifted so the limiter never answers 429. */
export function startService(root, stateDir) {
  const limits = [
    'RATE_MAIL_PER_KEY:100000000',
    'RATE_MAIL_PER_IP:100000000',
    'RATE_READ_PER_CREDENTIAL:100000000',
    'RATE_OTP_SEND_PER_CREDENTIAL:100000000',
    'RATE_OTP_SEND_PER_RECIPIENT:100000000',
    'RATE_OTP_SEND_PER_RECIPIENT_DAY:100000000',
    'RATE_OTP_BACKOFF_SECONDS:0',
    'RATE_OTP_FAILS_PER_RECIPIENT:100000000',
    'RATE_SIGNIN_PER_IP:100000000',
    'RATE_SIGNIN_PER_ADDRESS:100000000',
  ].join(',');
  return spawn(process.execPath, [join(root, 'scripts/start.mjs')], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...wranglerEnv(),
      PORT: String(PORT),
      POSTCODE_SMTP_PORT: String(SMTP_PORT),
      POSTCODE_STATE_DIR: stateDir,
      POSTCODE_NO_INBOX: '1',
      POSTCODE_QUIET: '1',
      POSTCODE_EXTRA_VARS: limits,
    },
  });
}

/** The probe Worker: the same wrangler, flags and kinds of bindings as the service. */
export function startProbe(root, stateDir) {
  const wrangler = join(root, 'node_modules/.bin/wrangler');
  const args = ['dev', '--config', join(root, 'scripts/bench/probe/wrangler.toml'), '--ip', '127.0.0.1'];
  args.push('--port', String(PROBE_PORT), '--persist-to', stateDir, '--show-interactive-dev-session=false');
  // postcode runs with --test-scheduled (scripts/start.mjs), which puts wrangler's /__scheduled check (a URL
  // parse) in front of every request; the probe takes the same flag so that neither side pays it alone.
  args.push('--test-scheduled', '--log-level', 'error', '--var', `SMTP_PORT:${SMTP_PORT}`);
  return spawn(wrangler, args, {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: wranglerEnv(),
  });
}

export async function waitForService(stateDir, child) {
  const file = join(stateDir, 'postcode-ready.json');
  for (let i = 0; i < 240; i++) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
    if (child.exitCode !== null) throw new Error('the service exited before it was ready');
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the service did not become ready');
}

export async function waitForProbe(child) {
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error('the probe Worker exited before it was ready');
    const ok = await fetch(`http://127.0.0.1:${PROBE_PORT}/setup`, { method: 'POST' }).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the probe Worker did not become ready');
}

export function stopGroup(child) {
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {}
}

/** Stops what the bench started, and the bench, when it is interrupted. */
export function stopOnSignals(stop) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      stop();
      process.exit(130);
    });
  }
}

/**
 * The sink (from the bench's checkout, `benchRoot`) and postcode (from `serviceRoot`) in a temporary state
 * directory under BENCH_STATE_DIR, ready; `stop()` (also on a signal) ends both and removes the state.
 */
export async function startPostcode(benchRoot, serviceRoot, name) {
  const stateDir = mkdtempSync(join(process.env.BENCH_STATE_DIR ?? tmpdir(), `postcode-${name}-`));
  const sink = await startSink(benchRoot);
  const child = startService(serviceRoot, stateDir);
  const stop = () => {
    stopGroup(child);
    sink.child.kill();
    rmSync(stateDir, { recursive: true, force: true });
  };
  stopOnSignals(stop);
  try {
    const ready = await waitForService(stateDir, child);
    return { sink, child, ready, baseUrl: `http://127.0.0.1:${PORT}`, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

/** The short commit of a checkout, for the report's heading. */
export function commitOf(root) {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: 'pipe' }).trim();
  } catch {
    return 'unknown';
  }
}

/** Runs a bench's main: exit 0 when it ends, 1 with the error when it throws. */
export function runBench(main) {
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
