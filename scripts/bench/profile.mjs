#!/usr/bin/env node
// npm run profile -- <send|verify|queue|health> [seconds]: a CPU profile of postcode's worker thread under
// the bench's load for one endpoint. It starts the sink and postcode as the bench does, and attaches to
// wrangler's inspector proxy (127.0.0.1:9229) once the load runs: workerd handles the inspector's messages
// only while the isolate is busy. Writes profile-<endpoint>-<time>.cpuprofile (open it in Chrome DevTools,
// Performance) and prints the share of samples per source file and the heaviest frames. Line numbers are
// of wrangler's bundle, which is copied next to the profile.
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { json, waitForQuiet } from './delivery.mjs';
import { autocannonRun, log } from './load.mjs';
import * as services from './services.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const [endpoint = 'send', seconds = '10'] = process.argv.slice(2);
const INSPECTOR = 'http://127.0.0.1:9229';

/** autocannon requests for `endpoint`; verify gets sessions made (and mailed) before it is measured. */
async function requestsFor(url, ready, sink) {
  let seq = 0;
  const post = (path, token, body) => ({
    method: 'POST',
    path,
    headers: json(token),
    setupRequest: (req) => ({ ...req, body: JSON.stringify(body(seq++)) }),
  });
  const send = () => post('/api/v1/instant-otp/send', ready.publicOtpToken, (i) => ({ email: `p${i}@bench.test` }));
  const make = {
    health: () => ({ method: 'GET', path: '/health' }),
    queue: () => post('/api/v1/emails', ready.mailKey, (i) => ({ to: `q${i}@bench.test`, subject: 's', text: 't' })),
    send,
  };
  if (endpoint !== 'verify') return make[endpoint] ?? usage();
  const sessions = [];
  const keep = (status, body) => status === 200 && sessions.push(JSON.parse(body).data);
  await autocannonRun(url, { amount: 3000, requests: [{ ...send(), onResponse: keep }] });
  await waitForQuiet(sink);
  const codes = await sink.otpCodes();
  const usable = sessions.filter((s) => codes[s.sessionId]);
  let next = 0;
  return () => ({
    ...post('/api/v1/instant-otp/verify', ready.publicOtpToken, () => {
      const s = usable[next++ % usable.length];
      return { sessionId: s.sessionId, email: s.email, code: codes[s.sessionId] };
    }),
  });
}

function usage() {
  throw new Error('usage: npm run profile -- <send|verify|queue|health> [seconds]');
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
  const tmp = join(root, '.wrangler/tmp');
  const dirs = readdirSync(tmp).filter((d) => d.startsWith('dev-'));
  return join(tmp, dirs.sort((a, b) => statSync(join(tmp, b)).mtimeMs - statSync(join(tmp, a)).mtimeMs)[0]);
}

async function main() {
  const stateDir = mkdtempSync(join(tmpdir(), 'postcode-profile-'));
  const sink = await services.startSink(root);
  const child = services.startService(root, stateDir);
  try {
    const ready = await services.waitForService(stateDir, child);
    const url = `http://127.0.0.1:${services.PORT}`;
    const request = await requestsFor(url, ready, sink);
    await autocannonRun(url, { duration: 3, requests: [request()] }); // warm-up
    log('warm; attaching to the inspector');
    const inspector = await inspect();
    const load = autocannonRun(url, { duration: Number(seconds) + 3, requests: [request()] });
    await new Promise((r) => setTimeout(r, 500));
    // wrangler's proxy echoes these commands without answering them; only the stop's answer is awaited.
    inspector.call('Profiler.enable');
    inspector.call('Profiler.setSamplingInterval', { interval: 100 });
    inspector.call('Profiler.start');
    await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
    log('stopping the profiler');
    const { result } = await inspector.call('Profiler.stop');
    await load;
    inspector.close();
    const name = `profile-${endpoint}-${Date.now()}`;
    const devDir = newestDevBundle();
    cpSync(devDir, join(root, `${name}-bundle`), { recursive: true });
    writeFileSync(join(root, `${name}.cpuprofile`), JSON.stringify(result.profile));
    console.log(summarise(result.profile, readFileSync(join(devDir, 'index.js'), 'utf8')));
    console.log(`\n${name}.cpuprofile and ${name}-bundle/ written`);
  } finally {
    services.stopGroup(child);
    sink.child.kill();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
