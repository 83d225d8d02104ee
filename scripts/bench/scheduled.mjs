#!/usr/bin/env node
// npm run bench:scheduled: how close to its `scheduledAt` scheduled mail reaches the SMTP server. postcode runs
// as `npm start` runs it (scripts/bench/services.mjs, the minute's cron included); BENCH_SCHEDULED_MAILS mails
// are queued at once, scheduled one a second from 100 s ahead: past any accept-time shortcut, so each one waits
// for the service's own timers. The sink notes when each first arrives. It prints `scheduled-late-p99 <s>`
// and `scheduled-late-p50 <s>` (arrival minus scheduledAt) and `scheduled-early <n>`. Only HTTP is used, so
// BENCH_ROOT can name another checkout whose postcode it starts.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { json } from './delivery.mjs';
import { log } from './load.mjs';
import * as services from './services.mjs';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const root = resolve(process.env.BENCH_ROOT ?? here);
const MAILS = Number(process.env.BENCH_SCHEDULED_MAILS ?? 60);
const LEAD_SECONDS = 100;
/** How long after the last one's time the bench waits for stragglers. */
const GRACE_SECONDS = 90;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

async function main() {
  const { sink, ready, baseUrl, stop } = await services.startPostcode(here, root, 'scheduled');
  try {
    await sink.reset();
    const start = Math.ceil(Date.now() / 1000) * 1000 + LEAD_SECONDS * 1000;
    const mails = [];
    for (let i = 0; i < MAILS; i++) {
      const scheduledAt = start + i * 1000;
      const res = await fetch(`${baseUrl}/api/v1/emails`, {
        method: 'POST',
        headers: json(ready.mailKey),
        body: JSON.stringify({
          to: `s${i}@bench.test`,
          subject: `Scheduled ${i}`,
          text: 'On time?',
          scheduledAt: new Date(scheduledAt).toISOString(),
        }),
      });
      const body = await res.json();
      if (res.status !== 200 || body.data.status !== 'SCHEDULED') {
        throw new Error(`queueing a scheduled mail: ${res.status} ${JSON.stringify(body)}`);
      }
      mails.push({ messageId: `<${body.data.id}@postcode.dev>`, scheduledAt });
    }
    const last = start + (MAILS - 1) * 1000;
    log(`${MAILS} mails scheduled from ${LEAD_SECONDS} s ahead, one a second; waiting for them`);
    const deadline = last + GRACE_SECONDS * 1000;
    let arrivals = {};
    while (Date.now() < deadline) {
      arrivals = await sink.arrivals();
      if (mails.every((m) => arrivals[m.messageId])) break;
      await sleep(1000);
    }
    const late = mails.filter((m) => arrivals[m.messageId]).map((m) => (arrivals[m.messageId] - m.scheduledAt) / 1000);
    const missing = MAILS - late.length;
    late.sort((a, b) => a - b);
    console.log('');
    console.log(`scheduled-late-p99 ${missing > 0 ? 'missing' : quantile(late, 0.99).toFixed(2)}`);
    console.log(`scheduled-late-p50 ${quantile(late, 0.5)?.toFixed(2) ?? 'missing'}`);
    console.log(`scheduled-early ${late.filter((s) => s < 0).length}`);
    console.log(
      `\npostcode scheduled-mail benchmark at ${services.commitOf(root)}, ${new Date().toISOString()}: ${MAILS} mails, ` +
        `${missing} not arrived within ${GRACE_SECONDS} s of the last one's time; seconds after scheduledAt: ` +
        `min ${late[0]?.toFixed(2)}, max ${late.at(-1)?.toFixed(2)}`,
    );
  } finally {
    stop();
  }
}

services.runBench(main);
