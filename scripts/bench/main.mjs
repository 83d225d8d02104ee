#!/usr/bin/env node
// npm run bench: postcode (started the way `npm start` does) against the probe Worker of scripts/bench/probe,
// whose routes make exactly the hops of each measured endpoint (the floor). Endpoint and floor rounds are
// interleaved; every figure is a median of rounds and every ratio is taken within this one run.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  deliveryRound,
  json,
  nodemailerRound,
  scheduledDeliveryRound,
  verifiedDomain,
  waitForQuiet,
} from './delivery.mjs';
import { autocannonRun, CONNECTIONS, log, measure, median, medianOf, ROUNDS, sequential, settle } from './load.mjs';
import { cpuWindow, treeRssMiB } from './proc.mjs';
import * as services from './services.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DELIVERY_MAILS = Number(process.env.BENCH_DELIVERY_MAILS ?? 2000);
/** How far ahead the delivery-alone rounds schedule their mails (queueing them must finish before). */
const DELIVERY_LEAD_SECONDS = Number(process.env.BENCH_DELIVERY_LEAD_SECONDS ?? 25);
const SINGLE_REQUESTS = Number(process.env.BENCH_SINGLE_REQUESTS ?? 200);
/** Sessions made for the verify rounds, per side (each round and each repeat uses its own). */
const VERIFY_SESSIONS = Number(process.env.BENCH_VERIFY_SESSIONS ?? 1500);
/** How long after the verify rounds their objects' alarms may still run (a minute, and a margin). */
const VERIFY_WAKE_SECONDS = 65;

/**
 * Endpoint and floor (and any `extra` probe routes), round by round in turn; `makeOptions(side, round,
 * attempt)`. Each measurement starts once both Workers are idle: what one left running (a queue's
 * deliveries, events after the answer) would otherwise be counted against the other, which shares the
 * machine's two cores.
 */
async function interleaved(service, probe, makeOptions, extra = [], rounds = ROUNDS) {
  const targets = [
    ['endpoint', service],
    ['floor', probe],
    ...extra.map((side) => [side, { ...probe, name: `floor (${side})` }]),
  ];
  const sides = Object.fromEntries(targets.map(([side]) => [side, []]));
  const idle = () => settle([service.pid, probe.pid]);
  for (let round = 0; round < rounds; round++) {
    for (const [side, target] of targets) {
      await idle();
      sides[side].push(await measure(target, (attempt) => makeOptions(side, round, attempt)));
    }
  }
  return Object.fromEntries(Object.entries(sides).map(([side, figures]) => [side, medianOf(figures)]));
}

async function main() {
  // BENCH_STATE_DIR=/dev/shm shows how much of a figure is the local disk.
  const stateDir = mkdtempSync(join(process.env.BENCH_STATE_DIR ?? tmpdir(), 'postcode-bench-'));
  const probeDir = mkdtempSync(join(process.env.BENCH_STATE_DIR ?? tmpdir(), 'postcode-probe-'));
  const sink = await services.startSink(root);
  const child = services.startService(root, stateDir);
  const probeChild = services.startProbe(root, probeDir);
  let peakMiB = 0;
  const sampler = setInterval(() => (peakMiB = Math.max(peakMiB, treeRssMiB(child.pid))), 250);
  const stop = () => {
    clearInterval(sampler);
    services.stopGroup(child);
    services.stopGroup(probeChild);
    sink.child.kill();
  };
  services.stopOnSignals(stop);
  try {
    const ready = await services.waitForService(stateDir, child);
    await services.waitForProbe(probeChild);
    const service = { name: 'postcode', url: `http://127.0.0.1:${services.PORT}`, pid: child.pid };
    const probe = { name: 'floor', url: `http://127.0.0.1:${services.PROBE_PORT}`, pid: probeChild.pid };
    log(`postcode at ${service.url}, probe at ${probe.url}; ${ROUNDS} rounds, ${CONNECTIONS} connections`);
    for (const target of [service, probe]) {
      await measure({ ...target, name: `${target.name} warm-up` }, () => ({
        duration: 2,
        requests: [{ method: 'GET', path: target === service ? '/health' : '/bare' }],
      }));
    }

    const paths = {
      bare: { endpoint: '/health', floor: '/bare' },
      queue: { endpoint: '/api/v1/emails', floor: '/queue', framework: '/queue-framework' },
      send: { endpoint: '/api/v1/instant-otp/send', floor: '/otp-send' },
      verify: { endpoint: '/api/v1/instant-otp/verify', floor: '/otp-verify' },
    };
    const headers = json(ready.publicOtpToken);
    const bare = await interleaved(service, probe, (side) => ({
      requests: [{ method: 'GET', path: paths.bare[side] }],
    }));

    let mailSeq = 0;
    const queue = await interleaved(
      service,
      probe,
      (side) => ({
        requests: [
          {
            method: 'POST',
            path: paths.queue[side],
            headers: json(ready.mailKey),
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({ to: `q${mailSeq++}@bench.test`, subject: 'bench', text: 'hello' }),
            }),
          },
        ],
      }),
      // The floor's hops behind Hono, zod-openapi and postcode's body schema: the framework's share of the gap.
      ['framework'],
    );
    await waitForQuiet(sink); // the consumer drains before the next measurement

    // Sessions of each side, kept for the verify rounds (the floor answers with its code).
    const sessions = { endpoint: [], floor: [] };
    const floorCodes = new Map();
    let otpSeq = 0;
    const keepSession = (side) => (status, body) => {
      if (status !== 200) return;
      const data = JSON.parse(body).data;
      sessions[side].push({ sessionId: data.sessionId, email: data.email });
      if (side === 'floor') floorCodes.set(data.sessionId, data.code);
    };
    const send = await interleaved(service, probe, (side) => ({
      requests: [
        {
          method: 'POST',
          path: paths.send[side],
          headers,
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `o${otpSeq++}@bench.test` }) }),
          onResponse: keepSession(side),
        },
      ],
    }));

    // The same send with `from`: the account's verified sender (unsigned), or an address on its verified domain
    // (DKIM-signed: one RSA-2048 signature, the key opened once per isolate; and its return path). Both read who
    // may send in one statement, so the difference in CPU is what signing costs. A difference of two noisy
    // figures: five rounds (a round's difference ranges over ±0.3 ms here).
    const signingDomain = await verifiedDomain(service.url, ready.mailKey);
    const signing = await interleaved(
      service,
      { ...service, name: 'postcode, signed' },
      (side) => ({
        requests: [
          {
            method: 'POST',
            path: paths.send.endpoint,
            headers,
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({
                email: `g${otpSeq++}@bench.test`,
                from: side === 'floor' ? `codes@${signingDomain}` : ready.senderEmail,
              }),
            }),
          },
        ],
      }),
      [],
      Math.max(ROUNDS, 5),
    );
    await waitForQuiet(sink);
    // One RSA-2048 signature alone, on the probe: the part of signing no implementation avoids.
    const rsa = await interleaved({ ...probe, name: 'probe /rsa-sign' }, probe, (side) => ({
      requests: [side === 'endpoint' ? { method: 'POST', path: '/rsa-sign' } : { method: 'GET', path: '/bare' }],
    }));
    const rsaCpuMs = rsa.endpoint.cpuMsPerRequest - rsa.floor.cpuMsPerRequest;

    // Verify on fresh sessions: made for it (not measured), then left to settle.
    for (const [side, target] of [
      ['endpoint', service],
      ['floor', probe],
    ]) {
      await autocannonRun(target.url, {
        amount: VERIFY_SESSIONS,
        requests: [
          {
            method: 'POST',
            path: paths.send[side],
            headers,
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `v${otpSeq++}@bench.test` }) }),
            onResponse: keepSession(side),
          },
        ],
      });
    }
    await waitForQuiet(sink);
    await settle([service.pid, probe.pid]);
    const endpointCodes = await sink.otpCodes();
    const codeOf = (side, sessionId) => (side === 'floor' ? floorCodes.get(sessionId) : endpointCodes[sessionId]);
    const verifiable = {
      endpoint: sessions.endpoint.filter((s) => endpointCodes[s.sessionId]),
      floor: sessions.floor,
    };
    const perRound = Math.floor(Math.min(verifiable.endpoint.length, verifiable.floor.length) / (ROUNDS + 2));
    if (perRound < 1) throw new Error('no verifiable OTP sessions');
    log(`verify rounds: ${perRound} fresh sessions each`);
    const verifySeq = { endpoint: 0, floor: 0 };
    const verify = await interleaved(service, probe, (side) => ({
      amount: perRound,
      requests: [
        {
          method: 'POST',
          path: paths.verify[side],
          headers,
          setupRequest: (req) => {
            const s = verifiable[side][verifySeq[side]++];
            return { ...req, body: JSON.stringify({ ...s, code: codeOf(side, s.sessionId) }) };
          },
        },
      ],
    }));

    // A verify leaves work for a minute later: the alarm that bounds its outbox row (FLUSH_AFTER_MS in
    // src/durable-objects/session-outbox.ts) wakes the session's object again, also when nothing is left
    // owed. In production that runs on the object's machine; here it would land in the single requests
    // and deliveries that follow. So the bench waits it out, and reports it per verify for both sides.
    const later = { endpoint: cpuWindow(service.pid), floor: cpuWindow(probe.pid) };
    log(`waiting ${VERIFY_WAKE_SECONDS} s for the verifies' later work`);
    await new Promise((r) => setTimeout(r, VERIFY_WAKE_SECONDS * 1000));
    await settle([service.pid, probe.pid]);
    for (const side of ['endpoint', 'floor']) {
      const { workerCpuSeconds, seconds } = later[side].stop();
      verify[side].laterCpuMsPerRequest = (workerCpuSeconds * 1000) / verifySeq[side];
      verify[side].laterSeconds = seconds;
    }

    // Single requests, one after another on one connection.
    const single = {};
    const once = async (name, make, onBody) => {
      single[name] = {};
      for (const side of ['endpoint', 'floor']) {
        await settle([service.pid, probe.pid]);
        const url = side === 'endpoint' ? service.url : probe.url;
        single[name][side] = await sequential(
          url,
          SINGLE_REQUESTS,
          (i) => make(side, i),
          onBody && ((i, b) => onBody(side, i, b)),
        );
      }
    };
    await once('bare', (side) => ({ path: paths.bare[side] }));
    const post = (side, name, body) => ({
      path: paths[name][side],
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    await once('queue', (side, i) => ({
      ...post(side, 'queue', { to: `s${i}@bench.test`, subject: 'one', text: 'x' }),
      headers: json(ready.mailKey),
    }));
    const singleSessions = { endpoint: [], floor: [] };
    await once(
      'send',
      (side, i) => post(side, 'send', { email: `single${i}@bench.test` }),
      (side, _i, body) => {
        singleSessions[side].push(body.data);
        if (side === 'floor') floorCodes.set(body.data.sessionId, body.data.code);
      },
    );
    await waitForQuiet(sink);
    await settle([service.pid, probe.pid]);
    Object.assign(endpointCodes, await sink.otpCodes());
    await once('verify', (side, i) => {
      const s = singleSessions[side][i];
      return post(side, 'verify', { sessionId: s.sessionId, email: s.email, code: codeOf(side, s.sessionId) });
    });

    const rounds = { queued: [], scheduled: [], baseline: [] };
    // The nodemailer baseline counts no lost or duplicated mails (its sink messages are not matched).
    const report = (name, d) =>
      log(
        `${name}: ${d.mailsPerSecond.toFixed(0)} mails/s` +
          (d.lost === undefined ? '' : `, lost ${d.lost}, duplicated ${d.duplicated}`) +
          (d.cpuMsPerMail === undefined ? '' : `, worker CPU ${d.cpuMsPerMail.toFixed(2)} ms/mail`),
      );
    for (let i = 0; i < ROUNDS; i++) {
      const queued = await deliveryRound(service.url, ready, sink, DELIVERY_MAILS);
      report(`queue and delivery round ${i + 1}`, queued);
      const scheduled = await scheduledDeliveryRound(
        service.url,
        ready,
        sink,
        DELIVERY_MAILS,
        DELIVERY_LEAD_SECONDS,
        service.pid,
      );
      report(`delivery alone round ${i + 1}`, scheduled);
      const baseline = await nodemailerRound(sink, DELIVERY_MAILS);
      report(`nodemailer round ${i + 1}`, baseline);
      rounds.queued.push(queued);
      rounds.scheduled.push(scheduled);
      rounds.baseline.push(baseline);
    }
    const summary = (list) => ({
      mailsPerSecond: median(list.map((d) => d.mailsPerSecond)),
      lost: list.reduce((s, d) => s + d.lost, 0),
      duplicated: list.reduce((s, d) => s + d.duplicated, 0),
    });
    const baseline = median(rounds.baseline.map((b) => b.mailsPerSecond));
    // `delivery` keeps its shape of earlier runs (queue and delivery together); `deliveryAlone` is new.
    const delivery = { ...summary(rounds.queued), baseline };
    const deliveryAlone = {
      ...summary(rounds.scheduled),
      baseline,
      cpuMsPerMail: median(rounds.scheduled.map((d) => d.cpuMsPerMail)),
    };

    const results = { bare, queue, send, signing, rsaCpuMs, verify, single, delivery, deliveryAlone, peakMiB };
    printTable(results, stateDir);
    const out = join(root, `bench-results-${Date.now()}.json`);
    writeFileSync(out, JSON.stringify({ rounds: ROUNDS, connections: CONNECTIONS, ...results }, null, 2));
    console.log(`\nJSON: ${out}`);
  } finally {
    stop();
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(probeDir, { recursive: true, force: true });
  }
}

function printTable(
  { bare, queue, send, signing, rsaCpuMs, verify, single, delivery, deliveryAlone, peakMiB },
  stateDir,
) {
  const ms = (v) => (v === null || Number.isNaN(v) ? '-' : `${v.toFixed(2)} ms`);
  const rows = [['', 'postcode', 'floor (probe)', 'efficiency']];
  const load = (name, goal, { endpoint, floor }) => {
    const efficiency = endpoint.rps / floor.rps;
    rows.push([
      name,
      `${endpoint.rps.toFixed(0)} req/s (p50 ${endpoint.p50}, p99 ${endpoint.p99} ms)`,
      `${floor.rps.toFixed(0)} req/s (p50 ${floor.p50}, p99 ${floor.p99} ms)`,
      `${efficiency.toFixed(2)}${goal ? ` (goal >= ${goal})` : ''}`,
    ]);
    rows.push(['  worker-thread CPU per request', ms(endpoint.cpuMsPerRequest), ms(floor.cpuMsPerRequest), '']);
  };
  load('bare route (GET /health | /bare)', null, bare);
  load('queue an email (POST /api/v1/emails)', 0.9, queue);
  const { framework } = queue;
  rows.push([
    "  the floor's hops behind Hono + zod (postcode's body schema)",
    `${framework.rps.toFixed(0)} req/s (p50 ${framework.p50}, p99 ${framework.p99} ms)`,
    `÷ floor: ${(framework.rps / queue.floor.rps).toFixed(2)}`,
    `postcode ÷ it: ${(queue.endpoint.rps / framework.rps).toFixed(2)}`,
  ]);
  rows.push(['    worker-thread CPU per request', ms(framework.cpuMsPerRequest), '', '']);
  load('OTP verify, fresh sessions', 0.9, verify);
  rows.push([
    '  worker-thread CPU a minute later, per verify',
    ms(verify.endpoint.laterCpuMsPerRequest),
    ms(verify.floor.laterCpuMsPerRequest),
    `over ${verify.endpoint.laterSeconds.toFixed(0)} s, idle included`,
  ]);
  load('instant OTP send, SMTP in request', 0.9, send);
  const signed = signing.floor;
  const unsigned = signing.endpoint;
  rows.push([
    '  from a verified domain, DKIM-signed | from a verified sender',
    `${signed.rps.toFixed(0)} req/s (p50 ${signed.p50}, p99 ${signed.p99} ms)`,
    `${unsigned.rps.toFixed(0)} req/s (p50 ${unsigned.p50}, p99 ${unsigned.p99} ms)`,
    `${(signed.rps / unsigned.rps).toFixed(2)}`,
  ]);
  rows.push([
    '    worker-thread CPU per request',
    ms(signed.cpuMsPerRequest),
    ms(unsigned.cpuMsPerRequest),
    `signing adds ${ms(signed.cpuMsPerRequest - unsigned.cpuMsPerRequest)} (goal <= 1 ms)`,
  ]);
  rows.push(['    of which one RSA-2048 signature (probe: /rsa-sign less /bare)', ms(rsaCpuMs), '', '']);
  const goals = { bare: null, queue: 4, verify: 4, send: 7 };
  for (const [name, goal] of Object.entries(goals)) {
    const { endpoint, floor } = single[name];
    rows.push([
      `single request, ${name} (p50 / p99)`,
      `${ms(endpoint.p50)} / ${ms(endpoint.p99)}${goal ? ` (goal p50 <= ${goal} ms)` : ''}`,
      `${ms(floor.p50)} / ${ms(floor.p99)}`,
      '',
    ]);
  }
  const deliveryRow = (name, d, goal) =>
    rows.push([
      name,
      `${d.mailsPerSecond.toFixed(0)} mails/s, lost ${d.lost}, duplicated ${d.duplicated}`,
      `nodemailer, pooled: ${d.baseline.toFixed(0)} mails/s`,
      `${(d.mailsPerSecond / d.baseline).toFixed(2)}x${goal ? ' (goal >= 1.5x)' : ''}`,
    ]);
  deliveryRow(`delivery of ${DELIVERY_MAILS} mails, queued during it`, delivery, false);
  deliveryRow(`delivery of ${DELIVERY_MAILS} mails queued before (alone)`, deliveryAlone, true);
  rows.push(['  worker-thread CPU per delivered mail', ms(deliveryAlone.cpuMsPerMail), '', '']);
  const all = [bare, queue, send, signing, verify].flatMap((sides) => Object.values(sides));
  rows.push(['non-2xx responses during load', String(all.reduce((s, f) => s + f.errors, 0)), '', '']);
  rows.push([
    'measurements taken again (other processes busy)',
    String(all.reduce((s, f) => s + f.repeated, 0)),
    `most other load kept: ${Math.max(...all.map((f) => f.maxForeignCores)).toFixed(2)} cores`,
    '',
  ]);
  rows.push(['peak memory of postcode processes', `${peakMiB.toFixed(0)} MiB`, '', '']);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  console.log(
    `\npostcode benchmark: medians of ${ROUNDS} rounds, ${CONNECTIONS} connections, ${SINGLE_REQUESTS} single requests, state in ${stateDir}, ${new Date().toISOString()}\n`,
  );
  for (const row of rows)
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
