#!/usr/bin/env node
// npm run profile -- <send|send-signed|verify|queue|health|delivery> [seconds] [floor|unsigned]: a CPU profile of
// postcode's worker thread under the bench's load for one endpoint (`delivery`: mails queued ahead, all due at one
// moment, profiled while the consumer delivers them, as the bench's delivery alone). It starts the sink and postcode as the bench does, and attaches to
// wrangler's inspector proxy (127.0.0.1:9229) once the load runs: workerd handles the inspector's messages
// only while the isolate is busy. Writes profile-<endpoint>-<time>.cpuprofile (open it in Chrome DevTools,
// Performance) and prints the share of samples per source file and the heaviest frames. Line numbers are
// of wrangler's bundle, which is copied next to the profile. With `floor`, it then profiles the probe's
// route for the endpoint (scripts/bench/probe) under the same load and prints, per frame, the milliseconds
// per request each side spends (profile-diff.mjs). `send-signed unsigned` compares a send from an address on a
// verified domain (DKIM-signed) with one from the account's verified sender, on the same service.
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { json, queueMails, verifiedDomain, waitForQuiet } from './delivery.mjs';
import { autocannonRun, log, settle } from './load.mjs';
import { compareProfiles, perRequest } from './profile-diff.mjs';
import * as services from './services.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The checkout whose postcode is profiled (BENCH_ROOT: another build's, to compare). */
const serviceRoot = resolve(process.env.BENCH_ROOT ?? root);
let [endpoint = 'send', seconds = '10', compare] = process.argv.slice(2);
const INSPECTOR = 'http://127.0.0.1:9229';

const PATHS = {
  postcode: {
    health: '/health',
    queue: '/api/v1/emails',
    send: '/api/v1/instant-otp/send',
    'send-signed': '/api/v1/instant-otp/send',
    verify: '/api/v1/instant-otp/verify',
  },
  floor: { health: '/bare', queue: '/queue', send: '/otp-send', verify: '/otp-verify' },
};

/**
 * autocannon requests for `endpoint` on one side (postcode or its floor, the probe); verify gets sessions
 * made (and mailed) before it is measured. The probe takes any token and answers a send with its code.
 */
async function requestsFor(side, url, tokens, sink, pid) {
  const paths = PATHS[side];
  let seq = 0;
  const post = (path, token, body) => ({
    method: 'POST',
    path,
    headers: json(token),
    setupRequest: (req) => ({ ...req, body: JSON.stringify(body(seq++)) }),
  });
  const send = () => post(paths.send, tokens.publicOtpToken, (i) => ({ email: `p${i}@bench.test` }));
  // From an address on a verified domain of the account: DKIM-signed.
  const domain = endpoint === 'send-signed' ? await verifiedDomain(url, tokens.mailKey) : null;
  const make = {
    health: () => ({ method: 'GET', path: paths.health }),
    queue: () => post(paths.queue, tokens.mailKey, (i) => ({ to: `q${i}@bench.test`, subject: 's', text: 't' })),
    send,
    'send-signed': () =>
      post(paths['send-signed'], tokens.publicOtpToken, (i) => ({
        email: `p${i}@bench.test`,
        from: `codes@${domain}`,
      })),
    // The same from the account's verified sender: what a signed send is compared with (`unsigned`).
    'send-sender': () =>
      post(paths.send, tokens.publicOtpToken, (i) => ({ email: `u${i}@bench.test`, from: tokens.senderEmail })),
  };
  if (endpoint !== 'verify') return make[endpoint] ?? usage();
  const sessions = [];
  const keep = (status, body) => status === 200 && sessions.push(JSON.parse(body).data);
  // Enough for the warm-up and the load (about 250 verifies a second here): each verify gets a fresh session.
  await autocannonRun(url, { amount: 400 * (Number(seconds) + 6), requests: [{ ...send(), onResponse: keep }] });
  await waitForQuiet(sink);
  await settle([pid]); // as in the bench: a user's verify comes well after the send, on a settled object
  const codes =
    side === 'floor' ? Object.fromEntries(sessions.map((s) => [s.sessionId, s.code])) : await sink.otpCodes();
  const usable = sessions.filter((s) => codes[s.sessionId]);
  let next = 0;
  return () => ({
    ...post(paths.verify, tokens.publicOtpToken, () => {
      const s = usable[next++ % usable.length];
      return { sessionId: s.sessionId, email: s.email, code: codes[s.sessionId] };
    }),
  });
}

function usage() {
  throw new Error('usage: npm run profile -- <send|send-signed|verify|queue|health|delivery> [seconds] [floor]');
}

/** A DevTools protocol session on the worker's isolate. */
async function inspect() {
  const targets = await (await fetch(`${INSPECTOR}/json`)).json();
  const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolveOpen, reject) => {
    socket.once('open', resolveOpen);
    socket.once('error', reject);
  });
  let id = 0;
  const pending = new Map();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data));
    if (pending.has(message.id) && ('result' in message || 'error' in message)) {
      pending.get(message.id)(message);
      pending.delete(message.id);
    }
  });
  const call = (method, params = {}) =>
    new Promise((answer) => {
      pending.set(++id, answer);
      socket.send(JSON.stringify({ id, method, params }));
    });
  return { call, close: () => socket.close() };
}

/** Share of samples per source file of the bundle (its `// src/…` markers) and per heaviest frame. */
function summarise(profile, bundle) {
  const markers = [];
  bundle.split('\n').forEach((line, index) => {
    if (/^\/\/ (src|node_modules)\//.test(line)) markers.push([index, line.slice(3)]);
  });
  const fileOf = (line) => markers.findLast(([start]) => start <= line)?.[1] ?? '?';
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map(profile.nodes.flatMap((n) => (n.children ?? []).map((c) => [c, n])));
  const byFile = new Map();
  const byFrame = new Map();
  const add = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const sample of profile.samples) {
    let node = nodes.get(sample);
    const frame = node.callFrame;
    add(byFrame, `${frame.functionName || '(anonymous)'} ${frame.url || '(native)'}:${frame.lineNumber + 1}`);
    while (node && !node.callFrame.url) node = parent.get(node.id);
    add(
      byFile,
      node
        ? node.callFrame.url === 'index.js'
          ? fileOf(node.callFrame.lineNumber)
          : node.callFrame.url
        : frame.functionName || '(native, no JS caller)',
    );
  }
  const top = (map, n) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, count]) => `${((100 * count) / profile.samples.length).toFixed(1).padStart(5)} %  ${key}`)
      .join('\n');
  return `${profile.samples.length} samples\n\nby source file (native calls count to their caller):\n${top(byFile, 25)}\n\nheaviest frames (self):\n${top(byFrame, 25)}`;
}

/** wrangler dev's bundle directory of this run (the newest under .wrangler/tmp). */
function newestDevBundle() {
  const tmp = join(serviceRoot, '.wrangler/tmp');
  const dirs = readdirSync(tmp).filter((d) => d.startsWith('dev-'));
  return join(tmp, dirs.sort((a, b) => statSync(join(tmp, b)).mtimeMs - statSync(join(tmp, a)).mtimeMs)[0]);
}

/**
 * Profiles the worker thread while `request` loads `url`: the profile, and the requests answered while it
 * ran (counted from the answers, so that a figure per request needs no guess at the rate).
 */
async function profileUnderLoad(url, request) {
  await autocannonRun(url, { duration: 3, requests: [request()] }); // warm-up
  log('warm; attaching to the inspector');
  const inspector = await inspect();
  let counting = false;
  let answered = 0;
  const counted = () => {
    const req = request();
    return {
      ...req,
      onResponse: (...args) => {
        if (counting) answered++;
        req.onResponse?.(...args);
      },
    };
  };
  const load = autocannonRun(url, { duration: Number(seconds) + 3, requests: [counted()] });
  await new Promise((r) => setTimeout(r, 500));
  // wrangler's proxy echoes these commands without answering them; only the stop's answer is awaited.
  inspector.call('Profiler.enable');
  inspector.call('Profiler.setSamplingInterval', { interval: 100 });
  inspector.call('Profiler.start');
  counting = true;
  await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
  log('stopping the profiler');
  const stopped = inspector.call('Profiler.stop');
  counting = false;
  const { result } = await stopped;
  await load;
  inspector.close();
  return { profile: result.profile, answered };
}

/** Delivery alone: mails queued ahead for one moment, profiled while they are delivered (no floor). */
async function profileDelivery(url, ready, sink) {
  const total = async () => Object.values(await sink.counts()).reduce((a, b) => a + b, 0);
  const dueAt = Date.now() + 45_000;
  // About 250 mails a second are delivered here: enough for the profile and its start.
  const ids = await queueMails(url, ready, 250 * (Number(seconds) + 3), { scheduledAt: new Date(dueAt).toISOString() });
  if (Date.now() > dueAt - 2000) throw new Error('queueing the mails took too long');
  log(`${ids.length} mails due at one moment; waiting for it`);
  const inspector = await inspect();
  await new Promise((r) => setTimeout(r, Math.max(0, dueAt + 2000 - Date.now())));
  inspector.call('Profiler.enable');
  inspector.call('Profiler.setSamplingInterval', { interval: 100 });
  inspector.call('Profiler.start');
  const before = await total();
  await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
  log('stopping the profiler');
  const stopped = inspector.call('Profiler.stop');
  const delivered = (await total()) - before;
  const { result } = await stopped;
  inspector.close();
  log(`${delivered} mails delivered while profiled`);
  return { profile: result.profile, answered: delivered };
}

async function main() {
  if (compare !== undefined && compare !== 'floor' && !(compare === 'unsigned' && endpoint === 'send-signed')) usage();
  if (endpoint === 'delivery' && compare !== undefined) usage();
  const stateDir = mkdtempSync(join(tmpdir(), 'postcode-profile-'));
  const sink = await services.startSink(root);
  let child = services.startService(serviceRoot, stateDir);
  try {
    const ready = await services.waitForService(stateDir, child);
    const url = `http://127.0.0.1:${services.PORT}`;
    const endpointRun =
      endpoint === 'delivery'
        ? await profileDelivery(url, ready, sink)
        : await profileUnderLoad(url, await requestsFor('postcode', url, ready, sink, child.pid));
    const name = `profile-${endpoint}-${Date.now()}`;
    const devDir = newestDevBundle();
    cpSync(devDir, join(root, `${name}-bundle`), { recursive: true });
    writeFileSync(join(root, `${name}.cpuprofile`), JSON.stringify(endpointRun.profile));
    console.log(summarise(endpointRun.profile, readFileSync(join(devDir, 'index.js'), 'utf8')));
    console.log(`\n${name}.cpuprofile and ${name}-bundle/ written`);
    if (!compare) return;
    if (compare === 'unsigned') {
      // The same service, the same send from the account's verified sender: what signing adds, frame by frame.
      const saved = endpoint;
      endpoint = 'send-sender';
      const senderRun = await profileUnderLoad(url, await requestsFor('postcode', url, ready, sink, child.pid));
      endpoint = saved;
      console.log(
        `\nsigned against unsigned (the "floor" column):\n${compareProfiles(perRequest(endpointRun.profile, endpointRun.answered), perRequest(senderRun.profile, senderRun.answered))}`,
      );
      return;
    }
    // The probe alone, so that the inspector on 9229 is its own.
    services.stopGroup(child);
    await waitForExit(child);
    child = services.startProbe(root, mkdtempSync(join(tmpdir(), 'postcode-profile-probe-')));
    await services.waitForProbe(child);
    const probeUrl = `http://127.0.0.1:${services.PROBE_PORT}`;
    const tokens = { publicOtpToken: 'pc_otp_probe', mailKey: 'pc_key_probe' };
    const floorRun = await profileUnderLoad(probeUrl, await requestsFor('floor', probeUrl, tokens, sink, child.pid));
    writeFileSync(join(root, `${name}-floor.cpuprofile`), JSON.stringify(floorRun.profile));
    console.log(
      `\n${compareProfiles(perRequest(endpointRun.profile, endpointRun.answered), perRequest(floorRun.profile, floorRun.answered))}`,
    );
    console.log(`\n${name}-floor.cpuprofile written`);
  } finally {
    services.stopGroup(child);
    sink.child.kill();
  }
}

/** Until the child has exited and nothing answers on the inspector's port any more. */
async function waitForExit(child) {
  if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  for (let i = 0; i < 60; i++) {
    const open = await fetch(`${INSPECTOR}/json`).then(
      () => true,
      () => false,
    );
    if (!open) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the inspector port of ${INSPECTOR} stayed in use`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
