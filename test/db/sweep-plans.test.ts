// The scheduled handler's reads of `emails` go through their partial indexes. Without statistics SQLite
// guesses, and a wrong guess reads every email of a status to test the rest of the condition.
import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';

/** Every statement a scheduled run prepares, as SQL. */
async function statementsOfScheduledRun(): Promise<string[]> {
  const sql: string[] = [];
  const db = new Proxy(env.DB, {
    get(target, property) {
      if (property !== 'prepare') return Reflect.get(target, property).bind(target);
      return (query: string) => {
        sql.push(query);
        return target.prepare(query);
      };
    },
  });
  await worker.scheduled(createScheduledController(), { ...env, DB: db });
  return sql;
}

/** The statement's plan, its parameters bound to null (numbered ones by their highest number). */
async function planOf(query: string): Promise<string[]> {
  const numbered = [...query.matchAll(/\?(\d+)/g)].map((m) => Number(m[1]));
  const count = numbered.length > 0 ? Math.max(...numbered) : (query.match(/\?/g) ?? []).length;
  const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query}`)
    .bind(...Array(count).fill(null))
    .all<{ detail: string }>();
  return rows.results.map((r) => r.detail);
}

describe('the scheduled handler', () => {
  it('finds due, scheduled and held emails through their own indexes, never by scanning emails', async () => {
    const statements = (await statementsOfScheduledRun()).filter((q) => /\bemails\b/.test(q));
    const plans = await Promise.all(statements.map(async (q) => ({ q, plan: await planOf(q) })));
    const steps = plans.flatMap(({ plan }) => plan);
    for (const index of ['emails_due', 'emails_scheduled', 'emails_held']) {
      expect(
        steps.some((step) => step.includes(`INDEX ${index}`)),
        index,
      ).toBe(true);
    }
    for (const { q, plan } of plans) {
      expect(
        plan.filter((step) => /^SCAN emails\b/.test(step)),
        q,
      ).toEqual([]);
    }
  });
});
