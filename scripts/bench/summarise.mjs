#!/usr/bin/env node
// Medians over several `npm run bench` runs: node scripts/bench/summarise.mjs bench-results-*.json
// Each figure is the median of the runs' own figures (each of those a median of its rounds).
import { readFileSync } from 'node:fs';
import { median } from './load.mjs';

const runs = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, 'utf8')));
if (runs.length === 0) throw new Error('usage: summarise.mjs bench-results-….json […]');
const of = (pick) => median(runs.map(pick));
const fixed = (value, digits = 2) => value.toFixed(digits);
const range = (pick, digits = 2) => {
  const values = runs.map(pick);
  return `${fixed(Math.min(...values), digits)}-${fixed(Math.max(...values), digits)}`;
};

const perSecond = (pick) => fixed(of(pick), 0);

console.log(`medians of ${runs.length} runs\n`);
console.log('| Figure | postcode | floor | efficiency (runs) | CPU/request postcode / floor |');
console.log('|---|---|---|---|---|');
for (const [name, label] of [
  ['bare', 'bare route'],
  ['queue', 'queue an email'],
  ['verify', 'OTP verify, fresh sessions'],
  ['send', 'instant OTP send'],
]) {
  const side = (s) => (run) => run[name][s];
  const efficiency = (run) => side('endpoint')(run).rps / side('floor')(run).rps;
  const rps = (s) => `${perSecond((run) => side(s)(run).rps)} req/s`;
  const cpu = (s) => fixed(of((run) => side(s)(run).cpuMsPerRequest));
  console.log(
    `| ${label} | ${rps('endpoint')} | ${rps('floor')} | ${fixed(of(efficiency))} (${range(efficiency)}) | ${cpu('endpoint')} / ${cpu('floor')} ms |`,
  );
}
if (runs.every((run) => run.queue.framework)) {
  // The floor's hops behind Hono, zod-openapi and postcode's body schema (runs from 2026-11-25 on).
  const ratio = (a, b) => (run) => run.queue[a].rps / run.queue[b].rps;
  console.log(
    `\nqueue an email, the floor's hops behind Hono + zod: ${perSecond((run) => run.queue.framework.rps)} req/s, ` +
      `${fixed(of((run) => run.queue.framework.cpuMsPerRequest))} ms CPU/request; ÷ floor ` +
      `${fixed(of(ratio('framework', 'floor')))} (${range(ratio('framework', 'floor'))}); postcode ÷ it ` +
      `${fixed(of(ratio('endpoint', 'framework')))} (${range(ratio('endpoint', 'framework'))})`,
  );
}
if (runs.every((run) => run.verify.endpoint.laterCpuMsPerRequest !== undefined)) {
  // The verifies' work a minute later (their objects' outbox alarms), waited out before the next phase.
  const later = (s) => fixed(of((run) => run.verify[s].laterCpuMsPerRequest));
  console.log(`\nOTP verify, worker-thread CPU a minute later per verify: ${later('endpoint')} / ${later('floor')} ms`);
}
console.log('\n| Single request | postcode p50 / p99 | floor p50 / p99 |');
console.log('|---|---|---|');
for (const name of ['bare', 'queue', 'verify', 'send']) {
  const ms = (s, q) => fixed(of((run) => run.single[name][s][q]));
  console.log(
    `| ${name} | ${ms('endpoint', 'p50')} / ${ms('endpoint', 'p99')} ms | ${ms('floor', 'p50')} / ${ms('floor', 'p99')} ms |`,
  );
}
const total = (pick) => runs.reduce((sum, run) => sum + pick(run), 0);
for (const [key, label] of [
  ['delivery', 'delivery, mails queued during it'],
  ['deliveryAlone', 'delivery alone, mails queued before'],
]) {
  if (!runs.every((run) => run[key])) continue; // runs from before the delivery-alone rounds
  const ratio = (run) => run[key].mailsPerSecond / run[key].baseline;
  console.log(
    `\n${label}: ${perSecond((run) => run[key].mailsPerSecond)} mails/s against pooled nodemailer ` +
      `${perSecond((run) => run[key].baseline)}: ${fixed(of(ratio))}x (${range(ratio)}); ` +
      `lost ${total((run) => run[key].lost)}, duplicated ${total((run) => run[key].duplicated)}`,
  );
}
