#!/usr/bin/env node
// npm run bench:scale: how the cost of each operation grows with the data. postcode runs as `npm start` runs
// it (scripts/bench/services.mjs); between runs its local state is grown in bulk, straight in the SQLite files
// while wrangler dev is stopped: accounts in D1 (scripts/bench/seed.mjs) and their mail in each account's
// object (scripts/bench/seed-objects.mjs). Two axes: the number of accounts (BENCH_SCALE_ACCOUNTS, a few
// emails each) and the emails of one large account (BENCH_SCALE_SIZES); at each step the operations of
// scripts/bench/scale-ops.mjs are timed with single requests one after another.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FOREIGN_CORES_LIMIT, log, sequential, settle } from './load.mjs';
import { cpuWindow } from './proc.mjs';
import { accountOperations, scaleOperations } from './scale-ops.mjs';
import { d1File, footprint, seedControlAccounts, smallAccount } from './seed.mjs';
import { seedBodies } from './seed-bodies.mjs';
import { randomSource } from './seed-content.mjs';
import { objectFiles, seedAccountEmails } from './seed-objects.mjs';
import * as services from './services.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const ACCOUNTS = (process.env.BENCH_SCALE_ACCOUNTS ?? '10,10000').split(',').map(Number);
/** The mail of each account beside the large one. */
const SMALL_ACCOUNT_EMAILS = 5;
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

/** Makes the objects of `accounts` (and the large account's) by one request each through the running service. */
async function makeObjects(baseUrl, keys) {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      const res = await fetch(`${baseUrl}/api/v1/templates`, { headers: { Authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`making an account's object: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

async function main() {
  const growing = (list) => list.every((n, i) => n > 0 && (i === 0 || n > list[i - 1]));
  if (!growing(SIZES)) throw new Error('BENCH_SCALE_SIZES: expected growing whole numbers, e.g. 10000,100000,1000000');
  if (ACCOUNTS.length !== 2 || !growing(ACCOUNTS) || ACCOUNTS[0] < 2) {
    throw new Error('BENCH_SCALE_ACCOUNTS: expected two growing numbers above 1, e.g. 10,10000');
  }
  // The cron's domain checks are an operation the bench times: npm start's own run every minute is left out.
  process.env.POSTCODE_SWEEP_SECONDS = '86400';
  const started = performance.now();
  const stateDir = mkdtempSync(join(process.env.BENCH_STATE_DIR ?? tmpdir(), 'postcode-scale-'));
  const sink = await services.startSink(root);
  // The accounts' webhook endpoints point here: every delivery is answered at once.
  const hooks = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise((r) => hooks.listen(WEBHOOK_PORT, '127.0.0.1', r));
  const webhookUrl = `http://127.0.0.1:${WEBHOOK_PORT}/hook`;
  const baseUrl = `http://127.0.0.1:${services.PORT}`;
  let child = null;
  const startService = async () => {
    rmSync(join(stateDir, 'postcode-ready.json'), { force: true });
    child = services.startService(root, stateDir);
    return services.waitForService(stateDir, child);
  };
  const stopService = async () => {
    if (!child) return;
    services.stopGroup(child);
    // The database files are the bench's to write only once every process of the group is gone.
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
  services.stopOnSignals(stopAll);
  try {
    // Once on an empty state: migrations and the demo account (the large one) with its keys.
    let ready = await startService();
    await stopService();
    const d1 = d1File(stateDir);
    const large = { index: 0, id: ready.accountId, sender: { id: ready.senderEmailId, email: ready.senderEmail } };
    const smallKey = smallAccount(1).key;
    const sample = reservoir(SAMPLE_SIZE);
    const bodiesWritten = new Set();
    const emailResults = {};
    const accountResults = {};
    const rows = {};
    const timings = [];
    let accounts = 1;
    let seeded = 0;

    /** Grows the accounts beside the large one to `count` in all: control plane, objects, a few emails each. */
    const addAccounts = async (count) => {
      const seedStart = performance.now();
      const added = seedControlAccounts(d1, accounts, count);
      ready = await startService();
      await makeObjects(baseUrl, [...(seeded === 0 ? [ready.mailKey] : []), ...added.map((a) => a.key)]);
      await stopService();
      const files = objectFiles(stateDir);
      for (const account of added) {
        const path = files.get(account.id);
        if (!path) throw new Error(`no object file names account ${account.id}`);
        seedAccountEmails(path, account, {
          from: 0,
          to: SMALL_ACCOUNT_EMAILS,
          customers: SMALL_ACCOUNT_EMAILS,
          webhookUrl: account.index % 5 === 0 ? webhookUrl : null,
        });
      }
      accounts = count;
      return seconds(seedStart);
    };
    /** Grows the large account's mail to `size` emails. */
    const addEmails = async (size) => {
      const seedStart = performance.now();
      const path = objectFiles(stateDir).get(large.id);
      if (!path) throw new Error('the large account has no object file');
      const added = seedAccountEmails(path, large, {
        from: seeded,
        to: size,
        // About four emails per customer at each size.
        customers: Math.max(50, Math.floor(size / 4)),
        templates: 50,
        webhookUrl,
        keep: sample.keep,
      });
      for (const [table, count] of Object.entries(added)) rows[table] = (rows[table] ?? 0) + count;
      seeded = size;
      // The sample's emails are the ones the detail reads whole, body included.
      await seedBodies(
        stateDir,
        sample.items.map((item) => item.id),
        bodiesWritten,
      );
      return seconds(seedStart);
    };
    /** Starts the service on what is seeded and times `operations` into `results[name][column]`. */
    const measure = async (label, seedSeconds, parts) => {
      log(`${label}: seeded in ${seedSeconds.toFixed(0)} s`);
      const startStart = performance.now();
      ready = await startService();
      const startSeconds = seconds(startStart);
      const service = { url: baseUrl, pid: child.pid };
      await quietMachine();
      const measureStart = performance.now();
      await fetch(`${baseUrl}/api/v1/emails`, { headers: { Authorization: `Bearer ${ready.mailKey}` } });
      for (const { operations, results, column } of parts) {
        for (const operation of operations) {
          results[operation.name] ??= {};
          results[operation.name][column] = await timeOperation(operation, service);
        }
      }
      await stopService();
      timings.push({ label, seedSeconds, startSeconds, measureSeconds: seconds(measureStart) });
    };
    const accountOps = () => accountOperations({ ready, smallKey, sink });
    const emailOps = () => scaleOperations({ baseUrl, ready, smallKey, sample: sample.items, sink });

    // The accounts axis at the smallest mail size, then the mail of the large account beside the most accounts.
    let seedSeconds = (await addAccounts(ACCOUNTS[0])) + (await addEmails(SIZES[0]));
    await measure(`${ACCOUNTS[0]} accounts`, seedSeconds, [
      { operations: accountOps(), results: accountResults, column: ACCOUNTS[0] },
    ]);
    seedSeconds = await addAccounts(ACCOUNTS[1]);
    await measure(`${ACCOUNTS[1]} accounts, ${sizeName(SIZES[0])} emails`, seedSeconds, [
      { operations: accountOps(), results: accountResults, column: ACCOUNTS[1] },
      { operations: emailOps(), results: emailResults, column: SIZES[0] },
    ]);
    for (const size of SIZES.slice(1)) {
      seedSeconds = await addEmails(size);
      await measure(`${sizeName(size)} emails`, seedSeconds, [
        { operations: emailOps(), results: emailResults, column: size },
      ]);
    }
    const space = footprint(objectFiles(stateDir).get(large.id));
    printReport({ emailResults, accountResults, rows, space, timings, totalSeconds: seconds(started) });
  } finally {
    stopAll();
  }
}

const sizeName = (size) => (size >= 1e6 ? `${size / 1e6}M` : size >= 1e3 ? `${size / 1e3}k` : String(size));
const ms = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** A table: a first column of names, then right-aligned cells. */
function printTable(table) {
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) {
    console.log(
      row
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
        .join('  ')
        .trimEnd(),
    );
  }
}

/** Rows of p50 / p99 per column of `results` ({ [operation]: { [column]: figure } }). */
function figureTable(results, columns, header) {
  const table = [['operation', ...columns.map(header)]];
  for (const [name, byColumn] of Object.entries(results)) {
    table.push([
      name,
      ...columns.map((column) => {
        const f = byColumn[column];
        return `${ms(f.p50)} / ${ms(f.p99)}${f.count < REQUESTS ? ` (n=${f.count})` : ''}`;
      }),
    ]);
  }
  return table;
}

function printReport({ emailResults, accountResults, rows, space, timings, totalSeconds }) {
  const flatness = (results, first, last, prefix) => {
    for (const [name, byColumn] of Object.entries(results)) {
      console.log(`${prefix} ${name} ${(byColumn[last].p50 / byColumn[first].p50).toFixed(2)}`);
    }
  };
  console.log('');
  flatness(emailResults, SIZES[0], SIZES.at(-1), 'flatness');
  flatness(accountResults, ACCOUNTS[0], ACCOUNTS[1], 'flatness-accounts');
  const worst = Object.entries(emailResults)
    .map(([name, byColumn]) => [name, byColumn[SIZES.at(-1)].p99])
    .sort((a, b) => b[1] - a[1])[0];
  console.log(`p99-largest ${worst[0]} ${worst[1].toFixed(1)}`);
  console.log(`bytes-per-email ${Math.round(space.usedBytes / space.emails)}`);
  // The email's own rows (its row, recipients, timeline, tags, attachment rows, with their indexes and
  // counters) apart from the account's other records that grow with its mail.
  const own = new Set(['emails', 'email_recipients', 'email_events', 'email_tags', 'email_attachments']);
  const ownBytes = space.tables.filter((t) => own.has(t.name)).reduce((sum, t) => sum + t.bytes, 0);
  console.log(`bytes-per-email-own-rows ${Math.round(ownBytes / space.emails)}`);

  console.log(
    `\npostcode scale benchmark at ${services.commitOf(root)}, ${new Date().toISOString()}: ${REQUESTS} single requests per operation ` +
      `and size (fewer when ${OP_SECONDS} s ran out: n)\n`,
  );
  printTable(figureTable(emailResults, SIZES, (size) => `${sizeName(size)} emails p50 / p99 ms`));
  console.log('');
  printTable(figureTable(accountResults, ACCOUNTS, (count) => `${count} accounts p50 / p99 ms`));
  const all = [emailResults, accountResults].flatMap((results) =>
    Object.values(results).flatMap((byColumn) => Object.values(byColumn)),
  );
  const perEmail = Object.entries(rows)
    .filter(([table]) => table !== 'emails')
    .map(([table, count]) => `${table} ${(count / rows.emails).toFixed(2)}`);
  console.log(`\nrows per email of the large account: ${perEmail.join(', ')}`);
  console.log(
    `the large account's object: ${(space.fileBytes / 2 ** 30).toFixed(2)} GiB file, ` +
      `${(space.usedBytes / 2 ** 30).toFixed(2)} GiB in use, ${space.emails} emails`,
  );
  const perTable = space.tables
    .filter((t) => t.bytes / space.emails >= 1)
    .map((t) => `${t.name} ${Math.round(t.bytes / space.emails)}`);
  console.log(`bytes per email by table, indexes included: ${perTable.join(', ')}`);
  for (const t of timings) {
    console.log(
      `${t.label}: seeding ${t.seedSeconds.toFixed(0)} s, start ${t.startSeconds.toFixed(0)} s, ` +
        `measuring ${t.measureSeconds.toFixed(0)} s`,
    );
  }
  console.log(
    `measurements taken again (other processes busy): ${all.reduce((s, f) => s + f.repeated, 0)}, most other load ` +
      `kept: ${Math.max(...all.map((f) => f.foreignCores)).toFixed(2)} cores; total ${(totalSeconds / 60).toFixed(1)} min`,
  );
}

services.runBench(main);
