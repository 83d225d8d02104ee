#!/usr/bin/env node
// npm run bench:sign-in: how long the dashboard's sign-in takes to answer for a member's address and for a
// stranger's. One service (started as `npm start` starts it, the bench's sink for its mail, limits lifted);
// the two kinds of request alternate one after another on one connection, each after a pause that lets the
// work after the previous answer finish. Prints p50 and p90 of each and their ratio, and checks that every
// member's request mailed a code and no stranger's did.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log } from './load.mjs';
import * as services from './services.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const REQUESTS = Number(process.env.BENCH_SIGNIN_REQUESTS ?? 200);
const WARM_UP = 20;
const PAUSE_MS = 60;

const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const at = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** A browser's first visit: the CSRF cookie every form must carry. */
async function formCookie(base) {
  const res = await fetch(`${base}/dashboard/login`);
  await res.text();
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { cookie, csrf: cookie.match(/pc_csrf=([^;]+)/)[1] };
}

async function main() {
  const { sink, ready, baseUrl: base, stop } = await services.startPostcode(root, root, 'sign-in');
  try {
    const member = ready.dashboardOwner;
    const { cookie, csrf } = await formCookie(base);
    const signIn = async (email) => {
      const started = performance.now();
      const res = await fetch(`${base}/dashboard/login`, {
        method: 'POST',
        headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, email, next: '/dashboard' }),
      });
      const page = await res.text();
      const ms = performance.now() - started;
      if (res.status !== 200 || !page.includes('name="sessionId"')) throw new Error(`${email}: ${res.status}`);
      await pause(PAUSE_MS);
      return ms;
    };
    const times = { member: [], stranger: [] };
    const total = WARM_UP + REQUESTS;
    for (let i = 0; i < total; i++) {
      const stranger = `stranger-${i}@example.com`;
      // Each pair in turn order, so that neither kind always follows the other.
      const pair =
        i % 2
          ? [
              ['member', member],
              ['stranger', stranger],
            ]
          : [
              ['stranger', stranger],
              ['member', member],
            ];
      for (const [kind, email] of pair) {
        const ms = await signIn(email);
        if (i >= WARM_UP) times[kind].push(ms);
      }
    }
    await pause(2_000);
    const codes = Object.keys(await sink.counts()).filter((id) => id.startsWith('<otp_')).length;
    const figure = (kind) => {
      const sorted = [...times[kind]].sort((a, b) => a - b);
      return { p50: at(sorted, 0.5), p90: at(sorted, 0.9) };
    };
    const [m, s] = [figure('member'), figure('stranger')];
    console.log(`sign-in answers, ${REQUESTS} of each kind, alternating (ms):`);
    console.log(`kind       p50     p90`);
    console.log(`member    ${m.p50.toFixed(2).padStart(5)}  ${m.p90.toFixed(2).padStart(6)}`);
    console.log(`stranger  ${s.p50.toFixed(2).padStart(5)}  ${s.p90.toFixed(2).padStart(6)}`);
    console.log(`member ÷ stranger, p50 ${(m.p50 / s.p50).toFixed(2)}, p90 ${(m.p90 / s.p90).toFixed(2)}`);
    console.log(`codes mailed: ${codes} for ${total} member requests`);
    if (codes !== total) throw new Error(`${codes} codes mailed for ${total} member requests`);
  } finally {
    stop();
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exit(1);
});
