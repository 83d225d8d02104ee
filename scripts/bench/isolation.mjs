#!/usr/bin/env node
// npm run bench:isolation: does one account's burst slow another account down? postcode runs as `npm start`
// runs it (scripts/bench/services.mjs). Account B queues single emails, reads the first page of its send log
// and calls a route that touches no store (the CPU baseline), each at a steady pace, first alone and then while
// account A sends batches of 100 from several connections and the consumer delivers them to the SMTP sink.
// It prints `isolation <operation> <B's p50 during A's burst ÷ B's p50 alone>`. Only HTTP and the operator API
// are used, so the same script measures any build: BENCH_ROOT names the checkout whose postcode it starts.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { json, waitForQuiet } from './delivery.mjs';
import { log } from './load.mjs';
import { cpuWindow } from './proc.mjs';
import * as services from './services.mjs';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const root = resolve(process.env.BENCH_ROOT ?? here);
/** How long B is timed in each phase. */
const SECONDS = Number(process.env.BENCH_ISOLATION_SECONDS ?? 30);
/** Each of B's operations starts one request this often (after the previous one has answered). */
const PACE_MS = 100;
/** A's connections, each sending one batch of BATCH after another. */
const BURST_CONNECTIONS = 4;
const BATCH = 100;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(baseUrl, path, { token, method = 'GET', body } = {}) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: token ? json(token) : undefined,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** Account B and a live mail key of its own, made through the operator API. */
async function secondAccount(baseUrl, adminToken) {
  const account = await call(baseUrl, '/admin/v1/accounts', { token: adminToken, method: 'POST', body: { name: 'B' } });
  const key = await call(baseUrl, `/admin/v1/accounts/${account.data.id}/api-keys`, {
    token: adminToken,
    method: 'POST',
    body: { scopes: ['mail_api'], name: 'isolation bench' },
  });
  return key.data.key;
}

/** B's operations: each a request maker. */
function operationsOf(baseUrl, key) {
  let n = 0;
  return {
    queue: () =>
      call(baseUrl, '/api/v1/emails', {
        token: key,
        method: 'POST',
        body: { to: `b${n++}@bench.test`, subject: 'Your receipt', text: 'Thanks for your order.' },
      }),
    log: () => call(baseUrl, '/api/v1/emails?page=1', { token: key }),
    'no-store': () => call(baseUrl, '/health'),
  };
}

/** Runs every operation at its pace for `seconds`; returns each one's p50 and count. */
async function paced(operations, seconds) {
  const until = performance.now() + seconds * 1000;
  const times = {};
  await Promise.all(
    Object.entries(operations).map(async ([name, request]) => {
      times[name] = [];
      while (performance.now() < until) {
        const started = performance.now();
        await request();
        const took = performance.now() - started;
        times[name].push(took);
        await sleep(Math.max(0, PACE_MS - took));
      }
    }),
  );
  const figures = {};
  for (const [name, list] of Object.entries(times)) {
    list.sort((a, b) => a - b);
    figures[name] = { p50: list[Math.floor(list.length / 2)], count: list.length };
  }
  return figures;
}

/** A's burst: BURST_CONNECTIONS connections each sending batches of BATCH until `stop()`; counts what it queued. */
function burst(baseUrl, key) {
  let running = true;
  let queued = 0;
  let batches = 0;
  const connection = async (c) => {
    while (running) {
      const emails = Array.from({ length: BATCH }, (_, i) => ({
        to: `a${c}-${batches}-${i}@bench.test`,
        subject: 'Your order has shipped',
        text: 'It is on its way.',
      }));
      batches++;
      const body = await call(baseUrl, '/api/v1/emails/batch', { token: key, method: 'POST', body: { emails } });
      queued += body.data.length;
    }
  };
  const done = Promise.all(Array.from({ length: BURST_CONNECTIONS }, (_, c) => connection(c)));
  return {
    stop: async () => {
      running = false;
      await done;
      return { queued, batches };
    },
  };
}

async function main() {
  const { sink, child, ready, baseUrl, stop } = await services.startPostcode(here, root, 'isolation');
  try {
    const operations = operationsOf(baseUrl, await secondAccount(baseUrl, ready.adminToken));
    // Warm: every path once, then B's pace for a few seconds.
    await paced(operations, 3);
    await waitForQuiet(sink);
    log(`B alone for ${SECONDS} s`);
    const alone = await paced(operations, SECONDS);
    await waitForQuiet(sink);
    log(`B during A's burst for ${SECONDS} s`);
    const a = burst(baseUrl, ready.mailKey);
    await sleep(3000);
    const window = cpuWindow(child.pid);
    const during = await paced(operations, SECONDS);
    const cpu = window.stop();
    const sent = await a.stop();
    log(`A queued ${sent.queued} emails in ${sent.batches} batches; waiting for their delivery`);
    await waitForQuiet(sink, 5000);

    console.log('');
    for (const name of Object.keys(operations)) {
      console.log(`isolation ${name} ${(during[name].p50 / alone[name].p50).toFixed(2)}`);
    }
    console.log(
      `\npostcode isolation benchmark at ${services.commitOf(root)}, ${new Date().toISOString()}: B's p50 in ms`,
    );
    for (const name of Object.keys(operations)) {
      const f = (x) => `${x.p50.toFixed(1)} ms (n=${x.count})`;
      console.log(`${name.padEnd(9)} alone ${f(alone[name])}  during A's burst ${f(during[name])}`);
    }
    const rate = sent.queued / (SECONDS + 3);
    console.log(
      `A's burst: ${sent.queued} emails queued (${rate.toFixed(0)}/s), ` +
        `the busiest Worker thread ${((100 * cpu.workerCpuSeconds) / SECONDS).toFixed(0)}% busy meanwhile`,
    );
  } finally {
    stop();
  }
}

services.runBench(main);
