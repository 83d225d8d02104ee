#!/usr/bin/env node
// npm start: local D1 migrations, a real SMTP inbox (maildev), `wrangler dev`, and a demo account.
// Ports and the state directory can be moved with env vars (the benchmark runs its own copy).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import nodeModule from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBrowser } from './build-browser.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

// The configuration check runs the Worker's TypeScript (scripts/start-config.mjs), which needs Node 22.15
// or later: run directly by an older Node, the script runs itself again with the project's own.
if (typeof nodeModule.registerHooks !== 'function' || typeof nodeModule.stripTypeScriptTypes !== 'function') {
  process.exit(spawnSync(bin('node'), process.argv.slice(1), { stdio: 'inherit' }).status ?? 1);
}

/** The start script's own settings (ports, the sweep interval); a bad value is a configuration problem too. */
const startProblems = [];
function wholeFromEnv(name, fallback, min, max) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = /^\d{1,6}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) startProblems.push(`${name}: expected a whole number >= ${min} and <= ${max}`);
  return value;
}
const PORT = wholeFromEnv('PORT', 8787, 1, 65_535);
const SMTP_PORT = wholeFromEnv('POSTCODE_SMTP_PORT', 1025, 1, 65_535);
const INBOX_PORT = wholeFromEnv('POSTCODE_INBOX_PORT', 1080, 1, 65_535);
const STATE_DIR = resolve(root, process.env.POSTCODE_STATE_DIR ?? '.wrangler/state');
const DEMO_FILE = join(STATE_DIR, 'postcode-demo.json');
const SKIP_INBOX = process.env.POSTCODE_NO_INBOX === '1';
// Production runs the scheduled handler every minute (wrangler.toml crons); locally we call it.
const SWEEP_SECONDS = wholeFromEnv('POSTCODE_SWEEP_SECONDS', 60, 1, 86_400);
const baseUrl = `http://127.0.0.1:${PORT}`;
const children = [];
// Children find the project's Node 22 (the `node` devDependency) first, even if this script was run
// with another Node directly.
const PATH = `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;

function log(message) {
  process.stdout.write(`[postcode] ${message}\n`);
}

/** The secrets `npm start` makes when .dev.vars lacks them, with a fresh random value each. */
const GENERATED_SECRETS = {
  ADMIN_TOKEN: () => randomBytes(24).toString('hex'),
  OTP_PEPPER: () => randomBytes(32).toString('hex'),
  DKIM_KEY_SECRET: () => randomBytes(32).toString('hex'),
};

const readDevVars = (path) =>
  Object.fromEntries(
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.includes('=') && !line.trim().startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1).trim()]),
  );

/** .dev.vars holds the local secrets: created on first run, and given any generated secret it lacks later. */
function ensureDevVars() {
  const path = join(root, '.dev.vars');
  if (!existsSync(path)) writeFileSync(path, 'SMTP_PASSWORD=\n');
  const present = readDevVars(path);
  const missing = Object.keys(GENERATED_SECRETS).filter((name) => !(name in present));
  if (missing.length > 0) {
    const text = readFileSync(path, 'utf8');
    const lines = missing.map((name) => `${name}=${GENERATED_SECRETS[name]()}`).join('\n');
    writeFileSync(path, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${lines}\n`);
    log(`wrote ${missing.join(', ')} to .dev.vars`);
  }
  const vars = readDevVars(path);
  if (!vars.ADMIN_TOKEN) throw new Error('.dev.vars has no ADMIN_TOKEN');
  return vars;
}

function start(name, command, args, env = {}) {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = (chunk) =>
    chunk
      .toString()
      .split('\n')
      .filter((line) => line.trim())
      .forEach((line) => {
        process.stdout.write(`[${name}] ${line}\n`);
      });
  child.stdout.on('data', prefix);
  child.stderr.on('data', prefix);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      log(`${name} exited (${signal ?? code}); stopping`);
      stop(1);
    }
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 500).unref();
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

async function waitFor(url, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not come up at ${url}`);
}

async function api(path, { method = 'GET', token, body } = {}) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: await res.json() };
}

/** Runs the Worker's scheduled handler, as production's cron does every minute. */
async function sweep() {
  try {
    const res = await fetch(`${baseUrl}/__scheduled?cron=*+*+*+*+*`);
    if (!res.ok) log(`scheduled handler answered ${res.status}`);
  } catch (error) {
    log(`scheduled handler not reached: ${error.message}`);
  }
}

/** A test-mode mail key (pc_test_…): its mail runs the whole pipeline but never reaches SMTP. */
async function testKey(adminToken, accountId) {
  const body = { scopes: ['mail_api'], mode: 'test', name: 'demo test mail' };
  return (await api(`/admin/v1/accounts/${accountId}/api-keys`, { method: 'POST', token: adminToken, body })).json.data
    .key;
}

/** The demo account's verified sender (the operator vouched for it). */
const DEMO_SENDER = 'hello@demo.postcode.dev';

/** Reuses the demo account from an earlier run if its key still works, otherwise issues a new one. */
async function ensureDemoAccount(adminToken) {
  if (existsSync(DEMO_FILE)) {
    const demo = JSON.parse(readFileSync(DEMO_FILE, 'utf8'));
    // A demo file from before test keys gets one now; the rest is kept.
    if ((await api('/api/v1/emails?limit=1', { token: demo.mailKey })).status === 200) {
      demo.testMailKey ??= await testKey(adminToken, demo.accountId);
      writeFileSync(DEMO_FILE, JSON.stringify(demo, null, 2));
      return demo;
    }
  }
  const admin = (path, body) => api(path, { method: 'POST', token: adminToken, body });
  const account = (await admin('/admin/v1/accounts', { name: 'Demo account' })).json.data;
  const mailKey = (
    await admin(`/admin/v1/accounts/${account.id}/api-keys`, { scopes: ['mail_api'], name: 'demo mail' })
  ).json.data;
  const otpKey = (
    await admin(`/admin/v1/accounts/${account.id}/api-keys`, { scopes: ['server_otp'], name: 'demo server otp' })
  ).json.data;
  const token = (await admin(`/admin/v1/accounts/${account.id}/otp-tokens`, { allowedIps: [] })).json.data;
  const sender = (await admin(`/admin/v1/accounts/${account.id}/senders`, { email: DEMO_SENDER, name: 'Demo Sender' }))
    .json.data;
  const demo = {
    accountId: account.id,
    mailKey: mailKey.key,
    serverOtpKey: otpKey.key,
    publicOtpToken: token.token,
    analyticsSecret: token.analyticsSecret,
    senderEmailId: sender.id,
    testMailKey: await testKey(adminToken, account.id),
  };
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(DEMO_FILE, JSON.stringify(demo, null, 2));
  return demo;
}

/** The demo account's owner in the dashboard: the sign-in code for it arrives in the local inbox. */
const DEMO_OWNER = 'owner@demo.postcode.dev';

/** Makes DEMO_OWNER the demo account's owner (already one from an earlier run: nothing to do). */
async function ensureDemoOwner(adminToken, accountId) {
  const body = { email: DEMO_OWNER, role: 'owner' };
  const res = await api(`/admin/v1/accounts/${accountId}/members`, { method: 'POST', token: adminToken, body });
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`demo owner: ${res.status} ${JSON.stringify(res.json)}`);
}

/** Applies the local D1 migrations; one line says what happened (wrangler's tables only when it fails). */
function applyMigrations() {
  const migrate = spawnSync(
    bin('wrangler'),
    ['d1', 'migrations', 'apply', 'postcode', '--local', '--persist-to', STATE_DIR],
    {
      cwd: root,
      env: { ...process.env, PATH, CI: 'true', CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (migrate.status !== 0) {
    process.stdout.write(`${migrate.stdout ?? ''}${migrate.stderr ?? ''}`);
    throw new Error('D1 migrations failed (wrangler says why above)');
  }
  if (/No migrations to apply/.test(migrate.stdout)) return 'database up to date';
  const count = Number(migrate.stdout.match(/About to apply (\d+) migration/)?.[1]);
  return count === 1 ? '1 migration applied' : `${count || 'the'} migrations applied`;
}

/** Variables `npm start` sets for `wrangler dev` (`--var`, over wrangler.toml and .dev.vars). */
const startVars = (dnsUrl, siteverifyUrl) => ({
  SMTP_HOST: '127.0.0.1',
  SMTP_PORT: String(SMTP_PORT),
  SMTP_SECURE: 'none',
  PUBLIC_BASE_URL: baseUrl,
  // Local development: webhooks may point at http://127.0.0.1 (production accepts only public https).
  WEBHOOK_ALLOW_INSECURE: 'true',
  // Domains are checked against the local resolver, which publishes what the service asks for.
  DNS_RESOLVER_URL: `${dnsUrl}/dns-query`,
  // A public token's Turnstile check goes to the local Siteverify, which knows Cloudflare's test secrets.
  TURNSTILE_VERIFY_URL: `${siteverifyUrl}/siteverify`,
  RETURN_PATH_MX: LOCAL_RETURN_PATH_MX,
  // Every local mail gets a return path postcode reads, so `npm run simulate` can bounce any of them.
  RETURN_PATH_DOMAIN: 'bounces.postcode.localhost',
  // Every account receives at <its slug>.inbound.postcode.localhost (mail reaches it through the local email handler).
  INBOUND_DOMAIN: 'inbound.postcode.localhost',
});

/**
 * The return path's MX host under `npm start`: nothing listens there; `npm run simulate` posts what it would
 * receive to wrangler dev's email() handler.
 */
const LOCAL_RETURN_PATH_MX = 'mx.postcode.localhost';

/**
 * The demo account's receiving domain, with a route that sends mail to support@ there as `email.received`
 * (docs/inbound.md); undefined when the service receives nowhere (INBOUND_DOMAIN unset).
 */
async function ensureDemoRoute(mailKey) {
  const domain = (await api('/api/v1/inbound/addresses', { token: mailKey })).json.data?.domains?.[0]?.domain;
  if (!domain) return undefined;
  const body = { pattern: `support@${domain}`, action: 'webhook' };
  const made = await api('/api/v1/inbound/routes', { method: 'POST', token: mailKey, body });
  if (made.status !== 201 && made.json.error?.code !== 'INBOUND_ROUTE_EXISTS') {
    throw new Error(`the demo account's inbound route: ${made.status} ${JSON.stringify(made.json)}`);
  }
  return domain;
}

/** The demo account's mail key, once known: the local resolver answers with its domains' records. */
let demoMailKey = null;

/**
 * What the local resolver answers for a name nobody published: the record the service asks the demo account
 * to publish there (its domains' DKIM, return path and DMARC records), so that pressing verify verifies.
 */
async function recordsAskedFor(name, type) {
  if (!demoMailKey) return null;
  const list = await api('/api/v1/domains?limit=100', { token: demoMailKey });
  for (const domain of list.json.data?.domains ?? []) {
    if (name !== domain.name && !name.endsWith(`.${domain.name}`)) continue;
    const { json } = await api(`/api/v1/domains/${domain.id}`, { token: demoMailKey });
    const records = (json.data?.records ?? []).filter((r) => r.name === name && r.type === type);
    if (records.length > 0) return records.map((r) => (type === 'MX' ? `${r.priority} ${r.value}.` : r.value));
  }
  return null;
}

async function main() {
  const vars = ensureDevVars();
  const quiet = process.env.POSTCODE_QUIET === '1';
  const { checkStartConfig, importTypeScript } = await import('./start-config.mjs');
  const { startDnsStub } = await importTypeScript('../test/support/node/dns-stub.ts');
  const dns = await startDnsStub(recordsAskedFor);
  children.push({ kill: () => dns.close() });
  const { startTurnstileStub } = await importTypeScript('../test/support/node/turnstile-stub.ts');
  const siteverify = await startTurnstileStub();
  children.push({ kill: () => siteverify.close() });
  // A bad port would show again in the Worker's variables made from it: the start script's own first.
  const checked = startProblems.length
    ? { problems: startProblems }
    : await checkStartConfig({
        root,
        startVars: startVars(dns.url, siteverify.url),
        extraVars: process.env.POSTCODE_EXTRA_VARS ?? '',
      });
  if (checked.problems.length > 0) {
    for (const problem of checked.problems) console.error(`[postcode] invalid configuration: ${problem}`);
    process.exitCode = 1;
    await dns.close();
    await siteverify.close();
    return;
  }
  mkdirSync(STATE_DIR, { recursive: true });
  log(applyMigrations());

  if (!SKIP_INBOX) {
    start('inbox', bin('maildev'), [
      '--smtp',
      String(SMTP_PORT),
      '--web',
      String(INBOX_PORT),
      '--ip',
      '127.0.0.1',
      '--silent',
    ]);
    await waitFor(`http://127.0.0.1:${INBOX_PORT}/email`, 'maildev');
  }

  buildBrowser(); // the element as browser/postcode-otp.js is now (wrangler dev bundles vendor/sdk)
  const wranglerArgs = [
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(PORT),
    '--persist-to',
    STATE_DIR,
    '--show-interactive-dev-session=false',
    '--test-scheduled', // GET /__scheduled runs the scheduled handler (the minute's cron)
    '--log-level',
    quiet ? 'error' : 'info',
    ...Object.entries(checked.vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
  ];
  start('wrangler', bin('wrangler'), wranglerArgs, {
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    WRANGLER_SEND_METRICS: 'false',
  });
  await waitFor(`${baseUrl}/health`, 'wrangler dev');

  // The cron, as production runs it: on start and every minute (domain checks). Mail left QUEUED by a killed
  // process needs no sweep: each account's object keeps its alarm in the state directory and rings after a restart.
  await sweep();
  setInterval(sweep, SWEEP_SECONDS * 1000).unref();

  const demo = await ensureDemoAccount(vars.ADMIN_TOKEN);
  await ensureDemoOwner(vars.ADMIN_TOKEN, demo.accountId);
  demoMailKey = demo.mailKey;
  const receiving = await ensureDemoRoute(demo.mailKey);
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(
    join(STATE_DIR, 'postcode-ready.json'),
    JSON.stringify({
      baseUrl,
      adminToken: vars.ADMIN_TOKEN,
      dnsUrl: dns.url,
      siteverifyUrl: siteverify.url,
      senderEmail: DEMO_SENDER,
      dashboardOwner: DEMO_OWNER,
      ...demo,
    }),
  );
  log('ready');
  console.log(`
  postcode is running at ${baseUrl}
  dashboard:             ${baseUrl}/dashboard  (sign in as ${DEMO_OWNER}; the code arrives in the inbox)
  inbox (maildev):       ${SKIP_INBOX ? '(disabled)' : `http://127.0.0.1:${INBOX_PORT}`}

  demo account:          ${demo.accountId}
  mail key (mail_api):   ${demo.mailKey}
  test mail key:         ${demo.testMailKey}  (never sends; try bounce@postcode.test)
  server OTP key:        ${demo.serverOtpKey}
  public OTP token:      ${demo.publicOtpToken}
  analytics secret:      ${demo.analyticsSecret}
  verified sender id:    ${demo.senderEmailId}
  local DNS resolver:    ${dns.url}/dns-query  (answers the records your domains ask for)
  local Siteverify:      ${siteverify.url}/siteverify  (Turnstile's test secrets: 1x…AA passes, 2x…AA fails)
  admin token:           in .dev.vars (ADMIN_TOKEN)

  Try: curl -s ${baseUrl}/api/v1/emails -H "Authorization: Bearer ${demo.mailKey}"
  A bounce for a sent mail: npm run simulate -- bounce <emailId> <recipient>  (docs/delivery.md)
  Mail to the account: npm run simulate -- inbound support@${receiving ?? '<its receiving domain>'}  (docs/inbound.md)
  Codes in any page:  <script type="module" src="${baseUrl}/sdk/v1/otp.js"></script>
                      <postcode-otp token="${demo.publicOtpToken}"></postcode-otp>  (docs/otp.md)
  Ctrl-C stops everything.
`);
}

main().catch((error) => {
  console.error(`[postcode] ${error.message}`);
  stop(1);
});
