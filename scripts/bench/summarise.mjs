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

console.log(`medians of ${runs.length} runs\n`);
console.log('| Figure | postcode | floor | efficiency (runs) | CPU/request postcode / floor |');
console.log('|---|---|---|---|---|');
for (const [name, label] of [
  ['bare', 'bare route'],
  ['queue', 'queue an email'],
  ['verify', 'OTP verify, fresh sessions'],
  ['send', 'instant OTP send'],
]) {
  const efficiency = (run) => run[name].endpoint.rps / run[name].floor.rps;
  console.log(
    `| ${label} | ${fixed(
      of((r) => r[name].endpoint.rps),
      0,
    )} req/s | ${fixed(
      of((r) => r[name].floor.rps),
      0,
    )} req/s | ` +
      `${fixed(of(efficiency))} (${range(efficiency)}) | ` +
      `${fixed(of((r) => r[name].endpoint.cpuMsPerRequest))} / ${fixed(of((r) => r[name].floor.cpuMsPerRequest))} ms |`,
  );
}
console.log('\n| Single request | postcode p50 / p99 | floor p50 / p99 |');
console.log('|---|---|---|');
for (const name of ['bare', 'queue', 'verify', 'send']) {
  const side = (s, q) => fixed(of((r) => r.single[name][s][q]));
  console.log(
    `| ${name} | ${side('endpoint', 'p50')} / ${side('endpoint', 'p99')} ms | ${side('floor', 'p50')} / ${side('floor', 'p99')} ms |`,
  );
}
const ratio = (run) => run.delivery.mailsPerSecond / run.delivery.baseline;
console.log(
  `\ndelivery: ${fixed(
    of((r) => r.delivery.mailsPerSecond),
    0,
  )} mails/s against pooled nodemailer ` +
    `${fixed(
      of((r) => r.delivery.baseline),
      0,
    )}: ${fixed(of(ratio))}x (${range(ratio)}); ` +
    `lost ${runs.reduce((s, r) => s + r.delivery.lost, 0)}, duplicated ${runs.reduce((s, r) => s + r.delivery.duplicated, 0)}`,
);
