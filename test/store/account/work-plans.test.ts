// The account alarm's statements go through their indexes (INDEXED BY where a partial index serves them), inside
// the account's object. Without statistics SQLite guesses, and a wrong guess reads every email of a status to
// test the rest of the condition; a table scan in planning would cost the whole account at every operation.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { listHeldEmailIds } from '../../../src/store/account/emails';
import { type AccountSql, ObjectSql } from '../../../src/store/account/object-sql';
import { claimOverdueEmails, claimOverdueScheduled, listScheduledDue } from '../../../src/store/account/outbox';
import { deleteExpiredRows, findExpiredEmails } from '../../../src/store/account/retention';
import { claimOverdueDeliveries } from '../../../src/store/account/webhook-deliveries';
import { oldestExpiring, oldestIdempotencyRecord, waitingWork } from '../../../src/store/account/work';
import type { SqlStatement } from '../../../src/store/sql';
import { accountDb } from '../../support/account-db';
import { newAccount, uniqueAddress } from '../../support/api';
import { storedEmail } from '../../support/delivery';

/** A statement as it ran: its text and its values. */
type Ran = { sql: string; values: unknown[] };

type Recorded = SqlStatement & { readonly inner: SqlStatement; readonly ran: Ran };

/** The account's database, noting each statement it runs (alone or in a batch). */
function recording(db: AccountSql, ran: Ran[]): AccountSql {
  const wrap = (sql: string, inner: SqlStatement, values: unknown[]): Recorded => {
    /** The statement, noted as it runs. */
    const noted = () => {
      ran.push({ sql, values });
      return inner;
    };
    return {
      bind: (...next) => wrap(sql, inner.bind(...next), next),
      first: (column) => noted().first(column),
      all: () => noted().all(),
      run: () => noted().run(),
      inner,
      ran: { sql, values },
    };
  };
  return {
    plane: 'account',
    prepare: (sql) => wrap(sql, db.prepare(sql), []),
    batch: (statements) => {
      const recorded = statements as Recorded[];
      ran.push(...recorded.map((s) => s.ran));
      return db.batch(recorded.map((s) => s.inner));
    },
  };
}

const stubOf = (accountId: string) => env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId));

/** Every statement `use` runs on the account's database, in the account's object. */
function statementsOf(accountId: string, use: (db: AccountSql) => Promise<unknown>): Promise<Ran[]> {
  return runInDurableObject(stubOf(accountId), async (_instance, state) => {
    const ran: Ran[] = [];
    await use(recording(new ObjectSql(state.storage), ran));
    return ran;
  });
}

/** The statement's plan in the account's database, with the values it ran with. */
async function planOf(accountId: string, { sql, values }: Ran): Promise<string[]> {
  const rows = await accountDb(accountId)
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...values)
    .all<{ detail: string }>();
  return rows.results.map((r) => r.detail);
}

/** The steps that walk a table, or the whole of an index (SCAN), other than a constant row. */
const scans = (plan: string[]) => plan.filter((step) => /^SCAN (?!CONSTANT ROW)/.test(step));

const HOUR_MS = 3_600_000;

/** What the alarm runs, each with the indexes its statements must use. */
const ALARM_STATEMENTS: { name: string; use: (db: AccountSql) => Promise<unknown>; indexes: string[] }[] = [
  { name: 'claimOverdueEmails', use: (db) => claimOverdueEmails(db, 30, 1_000), indexes: ['emails_due'] },
  {
    name: 'listScheduledDue',
    use: (db) => listScheduledDue(db, Date.now() - HOUR_MS, Date.now() + 90_000, 1_000),
    indexes: ['emails_scheduled'],
  },
  { name: 'claimOverdueScheduled', use: (db) => claimOverdueScheduled(db, 30, 1_000), indexes: ['emails_scheduled'] },
  {
    name: 'claimOverdueDeliveries',
    use: (db) => claimOverdueDeliveries(db, 30, 1_000),
    indexes: ['webhook_deliveries_due'],
  },
  { name: 'listHeldEmailIds', use: (db) => listHeldEmailIds(db, 100), indexes: ['emails_held'] },
  {
    name: 'findExpiredEmails',
    use: (db) => findExpiredEmails(db, new Date(Date.now() - 30 * 24 * HOUR_MS), 200),
    indexes: ['emails_final_updated'],
  },
  {
    name: 'deleteExpiredRows (webhook deliveries)',
    use: (db) => deleteExpiredRows(db, 'webhookDeliveries', new Date(), 1_000),
    indexes: ['webhook_deliveries_settled'],
  },
  {
    name: 'deleteExpiredRows (OTP history)',
    use: (db) => deleteExpiredRows(db, 'otpHistory', new Date(), 1_000),
    indexes: ['otp_verifications_verified'],
  },
  {
    name: 'deleteExpiredRows (OTP outcomes)',
    use: (db) => deleteExpiredRows(db, 'otpOutcomes', new Date(), 1_000),
    indexes: ['otp_outcomes_ended'],
  },
  {
    name: 'deleteExpiredRows (idempotency records)',
    use: (db) => deleteExpiredRows(db, 'idempotencyRecords', new Date(), 1_000),
    indexes: ['idempotency_records_created'],
  },
  {
    name: 'waitingWork',
    use: (db) => waitingWork(db, Date.now()),
    indexes: ['emails_due', 'webhook_deliveries_due', 'emails_held', 'emails_scheduled'],
  },
  {
    name: 'oldestExpiring',
    use: (db) => oldestExpiring(db),
    indexes: ['emails_final_updated', 'webhook_deliveries_settled', 'otp_verifications_verified', 'otp_outcomes_ended'],
  },
  {
    name: 'oldestIdempotencyRecord',
    use: (db) => oldestIdempotencyRecord(db),
    indexes: ['idempotency_records_created'],
  },
];

describe("the account alarm's statements", () => {
  for (const { name, use, indexes } of ALARM_STATEMENTS) {
    it(`${name} uses ${indexes.join(', ')} and scans no table`, async () => {
      const accountId = `plans-${crypto.randomUUID()}`;
      const ran = await statementsOf(accountId, use);
      expect(ran.length, name).toBeGreaterThan(0);
      const plans = await Promise.all(
        ran.map(async (statement) => ({ statement, plan: await planOf(accountId, statement) })),
      );
      const steps = plans.flatMap(({ plan }) => plan);
      for (const index of indexes) {
        expect(
          steps.some((step) => new RegExp(`INDEX ${index}\\b`).test(step)),
          `${name}: ${index} in ${JSON.stringify(steps)}`,
        ).toBe(true);
      }
      const scanning = plans.filter(({ plan }) => scans(plan).length > 0);
      expect(scanning.map(({ statement, plan }) => ({ sql: statement.sql, scans: scans(plan) }))).toEqual([]);
    });
  }

  it('an alarm with work waiting scans no table in any statement it runs', async () => {
    const { accountId } = await newAccount();
    // Mail on its way and mail scheduled for later: the alarm looks at both (its statements run either way).
    await storedEmail(accountId, uniqueAddress('plans'));
    await storedEmail(accountId, uniqueAddress('plans'), { scheduledAt: new Date(Date.now() + HOUR_MS).toISOString() });
    const prepared: string[] = [];
    const prepare = vi.spyOn(ObjectSql.prototype, 'prepare');
    try {
      await runInDurableObject(stubOf(accountId), async (instance: { alarm(): Promise<void> }) => {
        await instance.alarm();
      });
      prepared.push(...prepare.mock.calls.map(([sql]) => sql));
    } finally {
      prepare.mockRestore();
    }
    expect(prepared.length).toBeGreaterThan(0);
    const scanning: { sql: string; scans: string[] }[] = [];
    for (const sql of new Set(prepared)) {
      // Its parameters bound to null (numbered ones by their highest number).
      const numbered = [...sql.matchAll(/\?(\d+)/g)].map((m) => Number(m[1]));
      const count = numbered.length > 0 ? Math.max(...numbered) : (sql.match(/\?/g) ?? []).length;
      const plan = await planOf(accountId, { sql, values: Array(count).fill(null) });
      if (scans(plan).length > 0) scanning.push({ sql, scans: scans(plan) });
    }
    expect(scanning).toEqual([]);
  });
});
