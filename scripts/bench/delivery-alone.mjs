#!/usr/bin/env node
// npm run bench:delivery: only the delivery alone rows of `npm run bench` — mails queued ahead, all due at one
// moment, delivered to the SMTP sink — against pooled nodemailer to the same sink, round after round in turn.
// Minutes instead of the whole bench's ten, to compare builds: BENCH_ROOT names the checkout whose postcode it
// starts (as bench:isolation and bench:scheduled). Prints every round and `delivery-alone <ratio of medians>`.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodemailerRound, scheduledDeliveryRound } from './delivery.mjs';
import { log, median } from './load.mjs';
import * as services from './services.mjs';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const root = resolve(process.env.BENCH_ROOT ?? here);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MAILS = Number(process.env.BENCH_DELIVERY_MAILS ?? 2000);
const LEAD_SECONDS = Number(process.env.BENCH_DELIVERY_LEAD_SECONDS ?? 25);

async function main() {
  log(`delivery alone of ${root} (${services.commitOf(root)}): ${ROUNDS} rounds of ${MAILS} mails`);
  const { sink, child, ready, baseUrl, stop } = await services.startPostcode(here, root, 'delivery');
  const alone = [];
  const baseline = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const d = await scheduledDeliveryRound(baseUrl, ready, sink, MAILS, LEAD_SECONDS, child.pid);
      if (d.lost > 0 || d.duplicated > 0) throw new Error(`round ${round}: lost ${d.lost}, duplicated ${d.duplicated}`);
      const b = await nodemailerRound(sink, MAILS);
      log(
        `round ${round}: postcode ${d.mailsPerSecond.toFixed(0)} mails/s (worker CPU ${d.cpuMsPerMail.toFixed(2)} ms` +
          `/mail), nodemailer ${b.mailsPerSecond.toFixed(0)} mails/s`,
      );
      alone.push(d);
      baseline.push(b.mailsPerSecond);
    }
  } finally {
    stop();
  }
  const mailsPerSecond = median(alone.map((d) => d.mailsPerSecond));
  const cpu = median(alone.map((d) => d.cpuMsPerMail));
  console.log(`delivery-alone ${(mailsPerSecond / median(baseline)).toFixed(2)}`);
  console.log(
    `delivery-alone-mails-per-second ${mailsPerSecond.toFixed(0)} (nodemailer ${median(baseline).toFixed(0)})`,
  );
  console.log(`delivery-alone-cpu-ms-per-mail ${cpu.toFixed(2)}`);
}

services.runBench(main);
