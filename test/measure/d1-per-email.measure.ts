// What one accepted email costs D1 over its whole life (`npm run bench:d1`): accepted through the API, sent
// by the consumer, its webhook deliveries made, and deleted by retention, each phase with the real code on a
// real local D1, and the queues' messages held and handed to the consumers by hand so that every statement
// is counted. D1 runs one statement at a time per database, so its time per email bounds the accept rate
// of one database (docs/performance.md, "The ceiling of one database").
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import type { MailJob } from '../../src/queue/jobs';
import { deleteExpired } from '../../src/retention';
import { eventually, newAccount, UNLIMITED, uniqueAddress } from '../support/api';
import { runJobs } from '../support/delivery';
import { newWebhook } from '../support/webhooks';

const EMAILS = 200;
const EMAIL_EVENTS = ['email.queued', 'email.sent', 'email.failed', 'email.suppressed', 'email.canceled'];

type Tally = { roundTrips: number; statements: number; ms: number; rowsRead: number; rowsWritten: number };
const newTally = (): Tally => ({ roundTrips: 0, statements: 0, ms: 0, rowsRead: 0, rowsWritten: 0 });

function record(tally: Tally, results: D1Result[]) {
  tally.roundTrips += 1;
  for (const { meta } of results) {
    tally.statements += 1;
    tally.ms += meta.duration;
    tally.rowsRead += meta.rows_read;
    tally.rowsWritten += meta.rows_written;
  }
}

/** The database (or a session of it) with every statement's result counted into `tally`. */
function metered<T extends Pick<D1Database, 'prepare' | 'batch'>>(db: T, tally: Tally): T {
  const unwrapped = new WeakMap<object, D1PreparedStatement>();
  const statement = (target: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(target, {
      get(s, property) {
        if (property === 'bind') return (...values: unknown[]) => statement(s.bind(...values));
        if (property === 'run' || property === 'all') {
          return async () => {
            const result = await s.all();
            record(tally, [result]);
            return result;
          };
        }
        if (property === 'first') {
          return async (column?: string) => {
            const result = await s.all<Record<string, unknown>>();
            record(tally, [result]);
            const row = result.results[0] ?? null;
            return column === undefined ? row : (row?.[column] ?? null);
          };
        }
        if (property === 'raw') throw new Error('raw() is not metered');
        return Reflect.get(s, property);
      },
    });
    unwrapped.set(proxy, target);
    return proxy;
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'prepare') return (sql: string) => statement(target.prepare(sql));
      if (property === 'batch') {
        return async (statements: D1PreparedStatement[]) => {
          const results = await target.batch(statements.map((s) => unwrapped.get(s) ?? s));
          record(tally, results);
          return results;
        };
      }
      if (property === 'withSession') {
        return (constraint?: string) => metered((target as unknown as D1Database).withSession(constraint), tally);
      }
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Queue messages kept for the consumers run by hand. */
const heldQueue = (held: MailJob[]) =>
  ({
    send: async (body: MailJob) => void held.push(body),
    sendBatch: async (messages: { body: MailJob }[]) => void held.push(...messages.map((m) => m.body)),
  }) as unknown as Queue;

it(`measures D1 per accepted email over its life (${EMAILS} emails)`, { timeout: 600_000 }, async () => {
  const { mailKey } = await newAccount('D1 per email');
  await newWebhook(mailKey, EMAIL_EVENTS);
  const phases = { accept: newTally(), deliver: newTally(), webhooks: newTally(), retention: newTally() };
  const mailJobs: MailJob[] = [];
  const webhookJobs: MailJob[] = [];
  const bindings = (tally: Tally) => ({
    ...UNLIMITED,
    DB: metered(env.DB, tally),
    MAIL_QUEUE: heldQueue(mailJobs),
    WEBHOOK_QUEUE: heldQueue(webhookJobs),
  });
  const app = buildApp();
  const html = `<html><body>${'<p>Your order has shipped. Track it any time from your account.</p>'.repeat(450)}</body></html>`;
  const text = 'Your order has shipped. '.repeat(125);
  for (let i = 0; i < EMAILS; i++) {
    const request = new Request('http://postcode.test/api/v1/emails', {
      method: 'POST',
      headers: { Authorization: `Bearer ${mailKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ to: uniqueAddress('d1'), subject: `Order ${i} shipped`, html, text }),
    });
    const res = await app.fetch(request, bindings(phases.accept), createExecutionContext());
    expect(res.status).toBe(200);
  }
  // The queue messages and `email.queued` deliveries are produced after each response.
  await eventually(async () => (mailJobs.length === EMAILS ? true : undefined), 'the mail jobs');
  for (let i = 0; i < mailJobs.length; i += 10) {
    await runJobs(mailJobs.slice(i, i + 10), 1, 'postcode-mail', bindings(phases.deliver));
  }
  await eventually(async () => (webhookJobs.length === 2 * EMAILS ? true : undefined), 'the webhook jobs');
  for (let i = 0; i < webhookJobs.length; i += 10) {
    await runJobs(webhookJobs.slice(i, i + 10), 1, 'postcode-webhooks', bindings(phases.webhooks));
  }
  const later = new Date(Date.now() + 31 * 86_400_000);
  let deleted = 0;
  for (let run = 0; run < 20 && deleted < EMAILS; run++) {
    deleted += (await deleteExpired(bindings(phases.retention), later)).emails;
  }
  expect(deleted).toBe(EMAILS);

  const total = Object.values(phases).reduce((sum, t) => {
    for (const key of Object.keys(sum) as (keyof Tally)[]) sum[key] += t[key];
    return sum;
  }, newTally());
  const per = (value: number) => (value / EMAILS).toFixed(2);
  const lines = [`D1 per accepted email (${EMAILS} emails, 30 KB html + 3 KB text, one webhook endpoint):`];
  lines.push('phase        round trips  statements  D1 ms  rows read  rows written');
  for (const [name, t] of [...Object.entries(phases), ['total', total] as const]) {
    lines.push(
      `${name.padEnd(12)} ${per(t.roundTrips).padStart(11)}  ${per(t.statements).padStart(10)}  ${per(t.ms).padStart(5)}` +
        `  ${per(t.rowsRead).padStart(9)}  ${per(t.rowsWritten).padStart(12)}`,
    );
  }
  const perSecond = 1000 / (total.ms / EMAILS);
  lines.push(`d1-ms-per-email ${(total.ms / EMAILS).toFixed(3)}`);
  lines.push(`statements-per-email ${(total.statements / EMAILS).toFixed(2)}`);
  lines.push(`accepts-per-second-one-database ${Math.floor(perSecond)}`);
  console.log(lines.join('\n'));
});
