#!/usr/bin/env node
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// npm run bench: starts postcode the way `npm start` does (own ports, own state directory, its own
// counting SMTP server), drives it with autocannon, and prints one table of medians and ratios.
// Every ratio is against a baseline measured in this same run.
import autocannon from 'autocannon';
import nodemailer from 'nodemailer';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DELIVERY_MAILS = Number(process.env.BENCH_DELIVERY_MAILS ?? 2000);
const PORT = 8797;
const SMTP_PORT = 2526;
const SINK_HTTP_PORT = 2527;
const baseUrl = `http://127.0.0.1:${PORT}`;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const log = (message) => process.stderr.write(`[bench] ${message}\n`);

// ---- a counting SMTP server (scripts/bench-sink.mjs, its own process) ---------------------------
async function startSink() {
  const child = fork(join(root, 'scripts/bench-sink.mjs'), [String(SMTP_PORT), String(SINK_HTTP_PORT)], {
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
    otpCodes: () => get('/otp-codes'),
    reset: () => fetch(`http://127.0.0.1:${SINK_HTTP_PORT}/reset`, { method: 'POST' }),
  };
}

// ---- the service ------------------------------------------------------------------------------
function startService(stateDir) {
  const limits = [
    'RATE_MAIL_PER_KEY:100000000',
    'RATE_MAIL_PER_IP:100000000',
    'RATE_READ_PER_CREDENTIAL:100000000',
    'RATE_OTP_SEND_PER_CREDENTIAL:100000000',
    'RATE_OTP_SEND_PER_RECIPIENT:100000000',
    'RATE_OTP_FAILS_PER_RECIPIENT:100000000',
  ].join(',');
  const child = spawn(process.execPath, [join(root, 'scripts/start.mjs')], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(PORT),
      POSTCODE_SMTP_PORT: String(SMTP_PORT),
      POSTCODE_STATE_DIR: stateDir,
      POSTCODE_NO_INBOX: '1',
      POSTCODE_QUIET: '1',
      POSTCODE_EXTRA_VARS: limits,
      // wrangler dev's local trace explorer writes every invocation (each D1 and Durable Object call
      // included) to SQLite on the request path; production has no such cost, so the bench turns it
      // off unless BENCH_LOCAL_OBSERVABILITY=1 asks to measure with it.
      X_LOCAL_OBSERVABILITY: process.env.BENCH_LOCAL_OBSERVABILITY === '1' ? 'true' : 'false',
    },
  });
  return child;
}

async function waitForReady(stateDir, child) {
  const file = join(stateDir, 'postcode-ready.json');
  for (let i = 0; i < 240; i++) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
    if (child.exitCode !== null) throw new Error('the service exited before it was ready');
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the service did not become ready');
}

/** Resident memory (MiB) of a process and all its descendants. */
function treeRssMiB(pid) {
  try {
    const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,rss='], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/).map(Number));
    const children = new Map();
    for (const [p, pp] of rows) children.set(pp, [...(children.get(pp) ?? []), p]);
    const rss = new Map(rows.map(([p, , r]) => [p, r]));
    let total = 0;
    const stack = [pid];
    while (stack.length) {
      const p = stack.pop();
      total += rss.get(p) ?? 0;
      stack.push(...(children.get(p) ?? []));
    }
    return total / 1024;
  } catch {
    return 0;
  }
}

// ---- load ---------------------------------------------------------------------------------------
function run(options) {
  return new Promise((resolvePromise, reject) => {
    // A run is either timed (`duration`) or counted (`amount`).
    const shape = options.amount ? {} : { duration: DURATION };
    autocannon({ url: baseUrl, connections: CONNECTIONS, ...shape, ...options }, (error, result) =>
      error ? reject(error) : resolvePromise(result),
    );
  });
}

function summarise(result) {
  const ok = result['2xx'];
  const seconds = result.duration;
  return {
    rps: ok / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

async function rounds(name, makeOptions) {
  const all = [];
  for (let i = 0; i < ROUNDS; i++) {
    const result = summarise(await run(makeOptions(i)));
    log(
      `${name} round ${i + 1}: ${result.rps.toFixed(0)} ok req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.errors}`,
    );
    all.push(result);
  }
  return {
    rps: median(all.map((r) => r.rps)),
    p50: median(all.map((r) => r.p50)),
    p99: median(all.map((r) => r.p99)),
    errors: all.reduce((sum, r) => sum + r.errors, 0),
  };
}

const json = (token) => ({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' });

/** Waits until the sink has seen no new message for `quietMs` (the consumer's backlog is drained). */
async function waitForQuiet(sink, quietMs = 2000) {
  let last = -1;
  let since = Date.now();
  for (;;) {
    const total = Object.values(await sink.counts()).reduce((a, b) => a + b, 0);
    if (total !== last) {
      last = total;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Queues `count` mails through the API (the clock starts at the first request) and waits until the
 * sink holds every one of them; lost and duplicated are counted by Message-ID (<emailId@domain>).
 */
async function deliveryRound(ready, sink, count) {
  await waitForQuiet(sink);
  await sink.reset();
  const started = performance.now();
  const ids = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await fetch(`${baseUrl}/api/v1/emails`, {
        method: 'POST',
        headers: json(ready.mailKey),
        body: JSON.stringify({ to: `d${i}@bench.test`, subject: `delivery ${i}`, text: 'bench', priority: 'URGENT' }),
      });
      const body = await res.json();
      if (res.status === 200) ids.push(body.data.id);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const messageIds = ids.map((id) => `<${id}@postcode.dev>`);
  const delivered = async () => {
    const counts = await sink.counts();
    return messageIds.filter((m) => counts[m]).length;
  };
  const deadline = Date.now() + 300_000;
  while ((await delivered()) < ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const seconds = (performance.now() - started) / 1000;
  await new Promise((r) => setTimeout(r, 1000)); // late duplicates would show up here
  const counts = await sink.counts();
  const lost = count - messageIds.filter((m) => counts[m]).length;
  const duplicated = messageIds.reduce((sum, m) => sum + Math.max((counts[m] ?? 0) - 1, 0), 0);
  return { mailsPerSecond: ids.length / seconds, lost, duplicated };
}

/** The baseline: a pooled nodemailer client sending `count` mails to the same server. */
async function nodemailerRound(sink, count) {
  await sink.reset();
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: SMTP_PORT,
    secure: false,
    pool: true,
    maxConnections: CONNECTIONS,
    ignoreTLS: true,
  });
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await transport.sendMail({
        from: 'bench@bench.test',
        to: `n${i}@bench.test`,
        subject: `baseline ${i}`,
        text: 'bench',
        messageId: `<n${i}.${started}@bench.test>`,
      });
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  return { mailsPerSecond: count / seconds };
}

// ---- main ---------------------------------------------------------------------------------------
async function main() {
  // BENCH_STATE_DIR=/dev/shm shows how much of a figure is the local disk (each new Durable Object
  // is its own SQLite file, synced on write).
  const stateDir = mkdtempSync(join(process.env.BENCH_STATE_DIR ?? tmpdir(), 'postcode-bench-'));
  const sink = await startSink();
  const child = startService(stateDir);
  let peakMiB = 0;
  const sampler = setInterval(() => (peakMiB = Math.max(peakMiB, treeRssMiB(child.pid))), 250);
  const stop = () => {
    clearInterval(sampler);
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {}
    sink.child.kill();
  };
  process.on('SIGINT', () => {
    stop();
    process.exit(130);
  });
  try {
    const ready = await waitForReady(stateDir, child);
    log(`service ready at ${baseUrl}; ${ROUNDS} rounds of ${DURATION} s, ${CONNECTIONS} connections`);
    await run({ duration: 2, requests: [{ method: 'GET', path: '/health' }] }); // warm up

    const bare = await rounds('GET /health', () => ({ requests: [{ method: 'GET', path: '/health' }] }));

    let mailSeq = 0;
    const queue = await rounds('POST /api/v1/emails', () => ({
      requests: [
        {
          method: 'POST',
          path: '/api/v1/emails',
          headers: json(ready.mailKey),
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({ to: `q${mailSeq++}@bench.test`, subject: 'bench', text: 'hello' }),
          }),
        },
      ],
    }));
    await waitForQuiet(sink); // let the consumer drain before the next measurement

    let otpSeq = 0;
    const sessions = [];
    const otpSend = await rounds('POST /api/v1/instant-otp/send', () => ({
      requests: [
        {
          method: 'POST',
          path: '/api/v1/instant-otp/send',
          headers: json(ready.publicOtpToken),
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `o${otpSeq++}@bench.test` }) }),
          onResponse: (status, body) => {
            if (status === 200) {
              const data = JSON.parse(body).data;
              sessions.push({ sessionId: data.sessionId, email: data.email });
            }
          },
        },
      ],
    }));

    // Verify on fresh sessions: each request uses a session from the send rounds, with its real code.
    await waitForQuiet(sink);
    const codes = await sink.otpCodes();
    const verifiable = sessions.filter((s) => codes[s.sessionId]);
    const perRound = Math.floor(verifiable.length / ROUNDS);
    if (perRound < 1)
      throw new Error(
        `no OTP code could be matched to a session (${sessions.length} sent, ${Object.keys(codes).length} codes at the sink)`,
      );
    let verifySeq = 0;
    const verify = await rounds('POST /api/v1/instant-otp/verify', () => ({
      amount: perRound,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/instant-otp/verify',
          headers: json(ready.publicOtpToken),
          setupRequest: (req) => {
            const s = verifiable[verifySeq++];
            return {
              ...req,
              body: JSON.stringify({ sessionId: s.sessionId, email: s.email, code: codes[s.sessionId] }),
            };
          },
        },
      ],
    }));

    const deliveries = [];
    const baselines = [];
    for (let i = 0; i < ROUNDS; i++) {
      const d = await deliveryRound(ready, sink, DELIVERY_MAILS);
      log(
        `delivery round ${i + 1}: ${d.mailsPerSecond.toFixed(0)} mails/s, lost ${d.lost}, duplicated ${d.duplicated}`,
      );
      const b = await nodemailerRound(sink, DELIVERY_MAILS);
      log(`nodemailer round ${i + 1}: ${b.mailsPerSecond.toFixed(0)} mails/s`);
      deliveries.push(d);
      baselines.push(b);
    }
    const delivery = median(deliveries.map((d) => d.mailsPerSecond));
    const baseline = median(baselines.map((b) => b.mailsPerSecond));
    const lost = deliveries.reduce((s, d) => s + d.lost, 0);
    const duplicated = deliveries.reduce((s, d) => s + d.duplicated, 0);

    const rows = [
      ['bare route GET /health (baseline)', `${bare.rps.toFixed(0)} req/s`, `p50 ${bare.p50} ms, p99 ${bare.p99} ms`],
      ['POST /api/v1/emails accepted', `${queue.rps.toFixed(0)} req/s`, `p50 ${queue.p50} ms, p99 ${queue.p99} ms`],
      ['  ratio to bare route (goal >= 0.6)', (queue.rps / bare.rps).toFixed(2), ''],
      ['OTP verify, fresh sessions', `${verify.rps.toFixed(0)} req/s`, `p50 ${verify.p50} ms, p99 ${verify.p99} ms`],
      ['  ratio to bare route (goal >= 0.5)', (verify.rps / bare.rps).toFixed(2), ''],
      [
        'instant OTP send, SMTP in request',
        `${otpSend.rps.toFixed(0)} req/s`,
        `p50 ${otpSend.p50} ms, p99 ${otpSend.p99} ms`,
      ],
      ['  ratio to bare route (goal >= 0.25)', (otpSend.rps / bare.rps).toFixed(2), ''],
      [
        `delivery of ${DELIVERY_MAILS} queued mails`,
        `${delivery.toFixed(0)} mails/s`,
        `lost ${lost}, duplicated ${duplicated}`,
      ],
      ['pooled nodemailer, same server (baseline)', `${baseline.toFixed(0)} mails/s`, ''],
      ['  delivery ratio to nodemailer (goal >= 0.5)', (delivery / baseline).toFixed(2), ''],
      ['peak memory of started processes', `${peakMiB.toFixed(0)} MiB`, 'wrangler, workerd, start script'],
      ['non-2xx responses during load', String(bare.errors + queue.errors + verify.errors + otpSend.errors), ''],
    ];
    const width = Math.max(...rows.map((r) => r[0].length));
    const valueWidth = Math.max(...rows.map((r) => r[1].length));
    console.log(
      `\npostcode benchmark: medians of ${ROUNDS} rounds, ${CONNECTIONS} connections, state in ${stateDir}, ${new Date().toISOString()}\n`,
    );
    for (const [name, value, note] of rows)
      console.log(`${name.padEnd(width)}  ${value.padStart(valueWidth)}  ${note}`);
    const out = join(root, `bench-results-${Date.now()}.json`);
    writeFileSync(
      out,
      JSON.stringify(
        {
          rounds: ROUNDS,
          seconds: DURATION,
          connections: CONNECTIONS,
          stateDir,
          localObservability: process.env.BENCH_LOCAL_OBSERVABILITY === '1',
          bare,
          queue,
          verify,
          otpSend,
          delivery: { mailsPerSecond: delivery, baseline, lost, duplicated },
          peakMiB,
          ratios: {
            queue: queue.rps / bare.rps,
            verify: verify.rps / bare.rps,
            otpSend: otpSend.rps / bare.rps,
            delivery: delivery / baseline,
          },
        },
        null,
        2,
      ),
    );
    console.log(`\nJSON: ${out}`);
  } finally {
    stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
