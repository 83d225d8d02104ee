// What one accepted email costs the stores over its whole life (`npm run bench:store`): accepted through the API,
// sent by the consumer, its webhook deliveries made, and deleted by retention, each phase with the real code, and
// the queues' messages held and handed to the consumers by hand so that every statement is counted: those of the
// account's object (its own SQLite: calls into it, statements, rows) and those of D1 (the control plane, which
// an email should cost reads at most). An object runs one thing at a time, so what an email costs it bounds
// what one account takes (docs/performance.md, "The ceiling").
import { createExecutionContext, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app';
import { AccountStore } from '../../src/durable-objects/account-store';
import type { MailJob } from '../../src/queue/jobs';
import { deleteExpired } from '../../src/retention';
import { ObjectSql } from '../../src/store/account/object-sql';
import type { SqlResult } from '../../src/store/sql';
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

/** The account object's work in the current phase: calls into it, and every statement it runs. */
type ObjectTally = { calls: number; statements: number; rowsRead: number; rowsWritten: number };
const newObjectTally = (): ObjectTally => ({ calls: 0, statements: 0, rowsRead: 0, rowsWritten: 0 });
let objectPhase = newObjectTally();

function meterObjects() {
  const run = AccountStore.prototype.run;
  vi.spyOn(AccountStore.prototype, 'run').mockImplementation(function (this: AccountStore, ...args) {
    objectPhase.calls += 1;
    return run.apply(this, args);
  });
  // Every statement passes through the statement class's `execute` (a batch too).
  const statementClass = Object.getPrototypeOf(new ObjectSql({ sql: {} } as DurableObjectStorage).prepare('SELECT 1'));
  const execute = statementClass.execute as () => SqlResult;
  statementClass.execute = function (this: unknown) {
    const result = execute.call(this);
    objectPhase.statements += 1;
    objectPhase.rowsRead += result.meta.rows_read ?? 0;
    objectPhase.rowsWritten += result.meta.rows_written ?? 0;
    return result;
  };
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

it(`measures the stores per accepted email over its life (${EMAILS} emails)`, { timeout: 600_000 }, async () => {
  meterObjects();
  const { accountId, mailKey } = await newAccount('store per email');
  await newWebhook(mailKey, EMAIL_EVENTS);
  const phases = { accept: newTally(), deliver: newTally(), webhooks: newTally(), retention: newTally() };
  const objectPhases = {
    accept: newObjectTally(),
    deliver: newObjectTally(),
    webhooks: newObjectTally(),
    retention: newObjectTally(),
  };
  const mailJobs: MailJob[] = [];
  const webhookJobs: MailJob[] = [];
  const bindings = (tally: Tally) => ({
    ...UNLIMITED,
    DB: metered(env.DB, tally),
    MAIL_QUEUE: heldQueue(mailJobs),
    WEBHOOK_QUEUE: heldQueue(webhookJobs),
  });
  const app = buildApp();
  objectPhase = objectPhases.accept;
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
  objectPhase = objectPhases.deliver;
  for (let i = 0; i < mailJobs.length; i += 10) {
    await runJobs(mailJobs.slice(i, i + 10), 1, 'postcode-mail', bindings(phases.deliver));
  }
  await eventually(async () => (webhookJobs.length === 2 * EMAILS ? true : undefined), 'the webhook jobs');
  objectPhase = objectPhases.webhooks;
  for (let i = 0; i < webhookJobs.length; i += 10) {
    await runJobs(webhookJobs.slice(i, i + 10), 1, 'postcode-webhooks', bindings(phases.webhooks));
  }
  objectPhase = objectPhases.retention;
  const later = new Date(Date.now() + 31 * 86_400_000);
  const stub = env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId));
  let deleted = 0;
  for (let run = 0; run < 20 && deleted < EMAILS; run++) {
    const { emails } = await runInDurableObject(stub, (_instance, state) =>
      deleteExpired(env, new ObjectSql(state.storage), later),
    );
    deleted += emails;
  }
  expect(deleted).toBe(EMAILS);
  const bytes = await runInDurableObject(stub, (_instance, state) => state.storage.sql.databaseSize);

  const total = Object.values(phases).reduce((sum, t) => {
    for (const key of Object.keys(sum) as (keyof Tally)[]) sum[key] += t[key];
    return sum;
  }, newTally());
  const objectTotal = Object.values(objectPhases).reduce((sum, t) => {
    for (const key of Object.keys(sum) as (keyof ObjectTally)[]) sum[key] += t[key];
    return sum;
  }, newObjectTally());
  const per = (value: number) => (value / EMAILS).toFixed(2);
  const lines = [`Per accepted email (${EMAILS} emails, 30 KB html + 3 KB text, one webhook endpoint):`];
  lines.push('           the account object                          D1 (control plane)');
  lines.push('phase      calls  statements  rows read  rows written   round trips  statements  rows written');
  const names = [...Object.keys(phases), 'total'] as const;
  for (const name of names) {
    const o = name === 'total' ? objectTotal : objectPhases[name as keyof typeof objectPhases];
    const d = name === 'total' ? total : phases[name as keyof typeof phases];
    lines.push(
      `${name.padEnd(10)} ${per(o.calls).padStart(5)}  ${per(o.statements).padStart(10)}  ${per(o.rowsRead).padStart(9)}` +
        `  ${per(o.rowsWritten).padStart(12)}   ${per(d.roundTrips).padStart(11)}  ${per(d.statements).padStart(10)}` +
        `  ${per(d.rowsWritten).padStart(12)}`,
    );
  }
  lines.push(`object-calls-per-email ${(objectTotal.calls / EMAILS).toFixed(2)}`);
  lines.push(`object-statements-per-email ${(objectTotal.statements / EMAILS).toFixed(2)}`);
  lines.push(`d1-statements-per-email ${(total.statements / EMAILS).toFixed(2)}`);
  lines.push(`d1-rows-written-per-email ${(total.rowsWritten / EMAILS).toFixed(2)}`);
  lines.push(`object-file-bytes-after-retention ${bytes}`);
  console.log(lines.join('\n'));
});
