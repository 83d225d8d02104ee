#!/usr/bin/env node
// npm run bench:scale: how the cost of each operation grows with the data. postcode runs as `npm start` runs
// it (scripts/bench/services.mjs); its local D1 is grown in bulk between runs, straight in the SQLite file
// while wrangler dev is stopped (scripts/bench/seed.mjs), to each size of BENCH_SCALE_SIZES; at each size
// every operation of scripts/bench/scale-ops.mjs is timed with single requests one after another.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FOREIGN_CORES_LIMIT, log, sequential, settle } from './load.mjs';
import { cpuWindow } from './proc.mjs';
import { scaleOperations } from './scale-ops.mjs';
import { d1File, footprint, seedAccounts, seedEmails } from './seed.mjs';
import { seedBodies } from './seed-bodies.mjs';
import { randomSource } from './seed-content.mjs';
import * as services from './services.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 200);
/** An operation stops starting requests after this long (the table shows how many it made). */
const OP_SECONDS = Number(process.env.BENCH_SCALE_OP_SECONDS ?? 20);
/** How long a size waits for other processes to quieten before it is measured anyway. */
const QUIET_WAIT_SECONDS = Number(process.env.BENCH_SCALE_QUIET_WAIT_SECONDS ?? 300);
const WEBHOOK_PORT = 8799;
const SAMPLE_SIZE = 1000;
const ATTEMPTS = 3;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const seconds = (since) => (performance.now() - since) / 1000;

/** Waits until processes the bench did not start use at most FOREIGN_CORES_LIMIT cores (5 s windows). */
async function quietMachine() {
  const started = performance.now();
  for (;;) {
    const window = cpuWindow(process.pid);
    await sleep(5000);
    const { foreignCores } = window.stop();
    if (foreignCores <= FOREIGN_CORES_LIMIT) return;
    if (seconds(started) >= QUIET_WAIT_SECONDS) {
      log(`other processes still use ${foreignCores.toFixed(2)} cores; measuring anyway`);
      return;
    }
    log(`other processes use ${foreignCores.toFixed(2)} cores; waiting`);
  }
}

/** One operation: REQUESTS single requests (fewer past OP_SECONDS), taken again while the machine is busy. */
async function timeOperation(operation, service) {
  for (let attempt = 1; ; attempt++) {
    await operation.prepare?.(REQUESTS, attempt);
    await settle([service.pid]);
    const window = cpuWindow(service.pid);
    const until = performance.now() + OP_SECONDS * 1000;
    const figure = await sequential(service.url, REQUESTS, operation.request, undefined, until);
    const { foreignCores } = window.stop();
    await operation.settle?.();
    const noisy = foreignCores > FOREIGN_CORES_LIMIT;
    log(
      `${operation.name}: p50 ${figure.p50.toFixed(2)} ms, p99 ${figure.p99.toFixed(2)} ms over ${figure.count}, ` +
        `other processes ${foreignCores.toFixed(2)} cores` +
        (noisy ? (attempt < ATTEMPTS ? ' - too busy, measuring again' : ' - still busy, kept') : ''),
    );
    if (!noisy || attempt >= ATTEMPTS) return { ...figure, foreignCores, repeated: attempt - 1 };
  }
}

/** A uniform sample of what `keep` is shown (reservoir sampling), for the detail and `to` requests. */
function reservoir(size) {
  const items = [];
  const random = randomSource(5);
  let seen = 0;
  const keep = (id, canonical) => {
    seen++;
    if (items.length < size) items.push({ id, canonical });
    else if (random.int(seen) < size) items[random.int(size)] = { id, canonical };
  };
  return { items, keep };
}

async function main() {
  if (SIZES.some((size, i) => !(size > 0) || (i > 0 && size <= SIZES[i - 1]))) {
    throw new Error('BENCH_SCALE_SIZES: expected growing whole numbers, e.g. 10000,100000,1000000');
  }
  // The scheduled handler is an operation the bench times: npm start's own sweep every minute is left out.
  process.env.POSTCODE_SWEEP_SECONDS = '86400';
  const started = performance.now();
  const stateDir = mkdtempSync(join(process.env.BENCH_STATE_DIR ?? tmpdir(), 'postcode-scale-'));
  const sink = await services.startSink(root);
  // The large account's webhook endpoint points here: every delivery is answered at once.
  const hooks = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise((r) => hooks.listen(WEBHOOK_PORT, '127.0.0.1', r));
  let child = null;
  const startService = async () => {
    rmSync(join(stateDir, 'postcode-ready.json'), { force: true });
    child = services.startService(root, stateDir);
    return services.waitForService(stateDir, child);
  };
  const stopService = async () => {
    if (!child) return;
    services.stopGroup(child);
    // The database file is the bench's to write only once every process of the group is gone.
    for (;;) {
      try {
        process.kill(-child.pid, 0);
      } catch {
        break;
      }
      await sleep(100);
    }
    child = null;
  };
  const stopAll = () => {
    if (child) services.stopGroup(child);
    sink.child.kill();
    hooks.close();
    if (process.env.BENCH_SCALE_KEEP_STATE === '1') log(`state kept in ${stateDir}`);
    else rmSync(stateDir, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      stopAll();
      process.exit(130);
    });
  }
  try {
    // Once on an empty state: migrations and the demo account (the large one) with its keys.
    let ready = await startService();
    await stopService();
    const path = d1File(stateDir);
    const smallKey = seedAccounts(path, ready, `http://127.0.0.1:${WEBHOOK_PORT}/hook`);
    const sample = reservoir(SAMPLE_SIZE);
    const bodiesWritten = new Set();
    const results = {};
    const rows = {};
    const timings = [];
    let seeded = 0;
    for (const size of SIZES) {
      const seedStart = performance.now();
      const added = seedEmails(path, { from: seeded, to: size, largeId: ready.accountId, keep: sample.keep });
      for (const [table, count] of Object.entries(added)) rows[table] = (rows[table] ?? 0) + count;
      seeded = size;
      // The sample's emails are the ones the detail reads whole, body included.
      await seedBodies(
        stateDir,
        sample.items.map((item) => item.id),
        bodiesWritten,
      );
      const seedSeconds = seconds(seedStart);
      log(`${size} emails: seeded ${added.emails} more in ${seedSeconds.toFixed(0)} s`);
      const startStart = performance.now();
      ready = await startService();
      const startSeconds = seconds(startStart);
      const service = { url: `http://127.0.0.1:${services.PORT}`, pid: child.pid };
      await quietMachine();
      const measureStart = performance.now();
      await fetch(`${service.url}/api/v1/emails`, { headers: { Authorization: `Bearer ${ready.mailKey}` } });
      const operations = scaleOperations({ baseUrl: service.url, ready, smallKey, sample: sample.items, sink });
      for (const operation of operations) {
        results[operation.name] ??= {};
        results[operation.name][size] = await timeOperation(operation, service);
      }
      await stopService();
      timings.push({ size, seedSeconds, startSeconds, measureSeconds: seconds(measureStart) });
    }
    const space = footprint(path);
    printReport({ results, rows, space, timings, totalSeconds: seconds(started) });
  } finally {
    stopAll();
  }
}

const sizeName = (size) => (size >= 1e6 ? `${size / 1e6}M` : size >= 1e3 ? `${size / 1e3}k` : String(size));
const ms = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

function printReport({ results, rows, space, timings, totalSeconds }) {
  const first = SIZES[0];
  const last = SIZES.at(-1);
  console.log('');
  for (const [name, bySize] of Object.entries(results)) {
    console.log(`flatness ${name} ${(bySize[last].p50 / bySize[first].p50).toFixed(2)}`);
  }
  console.log(`bytes-per-email ${Math.round(space.usedBytes / space.emails)}`);
  // The email's own rows (its row, recipients, timeline, tags, attachment rows, with their indexes and
  // counters) apart from the account's other records that grow with its mail.
  const own = new Set(['emails', 'email_recipients', 'email_events', 'email_tags', 'email_attachments']);
  const ownBytes = space.tables.filter((t) => own.has(t.name)).reduce((sum, t) => sum + t.bytes, 0);
  console.log(`bytes-per-email-own-rows ${Math.round(ownBytes / space.emails)}`);

  const table = [['operation', ...SIZES.map((size) => `${sizeName(size)} p50 / p99 ms`)]];
  for (const [name, bySize] of Object.entries(results)) {
    table.push([
      name,
      ...SIZES.map((size) => {
        const f = bySize[size];
        return `${ms(f.p50)} / ${ms(f.p99)}${f.count < REQUESTS ? ` (n=${f.count})` : ''}`;
      }),
    ]);
  }
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
  } catch {}
  console.log(
    `\npostcode scale benchmark at ${commit}, ${new Date().toISOString()}: ${REQUESTS} single requests per operation ` +
      `and size (fewer when ${OP_SECONDS} s ran out: n)\n`,
  );
  for (const row of table) {
    console.log(
      row
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
        .join('  ')
        .trimEnd(),
    );
  }
  const all = Object.values(results).flatMap((bySize) => Object.values(bySize));
  const perEmail = Object.entries(rows)
    .filter(([table]) => table !== 'emails')
    .map(([table, count]) => `${table} ${(count / rows.emails).toFixed(2)}`);
  console.log(`\nrows per email: ${perEmail.join(', ')}`);
  console.log(
    `database: ${(space.fileBytes / 2 ** 30).toFixed(2)} GiB file, ${(space.usedBytes / 2 ** 30).toFixed(2)} GiB in use, ` +
      `${space.emails} emails`,
  );
  const perTable = space.tables
    .filter((t) => t.bytes / space.emails >= 1)
    .map((t) => `${t.name} ${Math.round(t.bytes / space.emails)}`);
  console.log(`bytes per email by table, indexes included: ${perTable.join(', ')}`);
  for (const t of timings) {
    console.log(
      `${sizeName(t.size)}: seeding ${t.seedSeconds.toFixed(0)} s, start ${t.startSeconds.toFixed(0)} s, ` +
        `measuring ${t.measureSeconds.toFixed(0)} s`,
    );
  }
  console.log(
    `measurements taken again (other processes busy): ${all.reduce((s, f) => s + f.repeated, 0)}, most other load ` +
      `kept: ${Math.max(...all.map((f) => f.foreignCores)).toFixed(2)} cores; total ${(totalSeconds / 60).toFixed(1)} min`,
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
