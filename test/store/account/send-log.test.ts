// The send log's data layer: totals from counters that stay exact through every change of an email (stored,
// status moved, deleted by retention), pages by number and by cursor that agree, and plans that read only
// the filter's index entries and the page's rows. All of it in the account's object, whose database holds the log.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { BounceReason } from '../../../src/mail/bounce-reasons';
import { accountStore } from '../../../src/store/account/client';
import type { EmailStatus } from '../../../src/store/account/emails';
import type { AccountSql } from '../../../src/store/account/object-sql';
import { listEmails, type SendLogFilter } from '../../../src/store/account/send-log';
import { decodeCursor, type PageRequest } from '../../../src/store/paging';
import { accountDb } from '../../support/account-db';
import { newAccount, uniqueAddress } from '../../support/api';
import { storedEmail } from '../../support/delivery';

const STATUSES: EmailStatus[] = ['QUEUED', 'SENT', 'FAILED', 'CANCELED', 'SUPPRESSED'];
const TAGS = ['category:receipt', 'category:welcome', 'locale:de'];
const REASONS: BounceReason[] = ['mailbox_full', 'blocked'];
const DAY = 86_400_000;
/**
 * The log's times, from a minute a day ahead: the account's alarm (which may run during the test) then finds
 * none of these emails overdue (to queue again) or expired (to delete), and leaves them as the test sets them.
 */
const base = Math.floor((Date.now() + DAY) / 60_000) * 60_000;

/** Emails of one account in both modes, with tags, shared recipients and every status. */
async function seedLog(accountId: string, count: number) {
  const customers = [uniqueAddress('ada'), uniqueAddress('grace'), uniqueAddress('edsger')];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    // One value per tag name: receipt, welcome or no category; German now and then.
    const tags = [i % 3 === 2 ? null : TAGS[i % 2], i % 4 === 0 ? TAGS[2] : null]
      .filter((tag) => tag != null)
      .map((tag) => {
        const [name, value] = tag.split(':') as [string, string];
        return { name, value };
      });
    const to = customers[i % 3]!;
    const id = await storedEmail(accountId, i % 4 === 0 ? [to, customers[(i + 1) % 3]!] : to, {
      tags,
      test: i % 5 === 0,
      // Every third pair shares a time: the id breaks the tie.
      createdAt: new Date(base + Math.floor(i / 2) * 60_000).toISOString(),
    });
    ids.push(id);
    // Bounces: a full mailbox now and then; both recipients of some two-recipient emails blocked (one email
    // with two recipients of one reason comes once).
    if (i % 3 === 1) await bounced(accountId, id, 0, 'mailbox_full');
    if (i % 8 === 0) for (const position of [0, 1]) await bounced(accountId, id, position, 'blocked');
  }
  return { ids, customers };
}

async function bounced(accountId: string, id: string, position: number, reason: BounceReason) {
  await accountDb(accountId)
    .prepare(
      `UPDATE email_recipients SET status = 'BOUNCED', bounce_type = 'soft', bounce_reason = ?3
     WHERE email_id = ?1 AND position = ?2`,
    )
    .bind(id, position, reason)
    .run();
}

async function setStatus(accountId: string, id: string, status: EmailStatus, at = base + DAY) {
  await accountDb(accountId)
    .prepare('UPDATE emails SET status = ?2, updated_at = ?3 WHERE id = ?1')
    .bind(id, status, at)
    .run();
}

/** The filter's emails counted and ordered the slow way, straight from the rows. */
async function truth(accountId: string, test: boolean, filter: SendLogFilter) {
  const [name, value] = filter.tag ? filter.tag.split(':') : [null, null];
  const rows = await accountDb(accountId)
    .prepare(
      `SELECT e.id FROM emails e WHERE e.account_id = ?1 AND e.test = ?2 AND (?3 IS NULL OR e.status = ?3)
       AND (?4 IS NULL OR EXISTS (SELECT 1 FROM email_recipients r WHERE r.email_id = e.id AND r.canonical = ?4))
       AND (?5 IS NULL OR EXISTS (SELECT 1 FROM email_tags t WHERE t.email_id = e.id AND t.name = ?5 AND t.value = ?6))
       AND (?7 IS NULL OR EXISTS (SELECT 1 FROM email_recipients b WHERE b.email_id = e.id AND b.bounce_reason = ?7))
     ORDER BY e.created_at DESC, e.id DESC`,
    )
    .bind(accountId, test ? 1 : 0, filter.status ?? null, filter.to ?? null, name, value, filter.bounceReason ?? null)
    .all<{ id: string }>();
  return rows.results.map((r) => r.id);
}

/** Every combination of the filters the log takes; a bounce reason with a status, a recipient and a tag or not. */
function filters(customers: string[]): SendLogFilter[] {
  const out: SendLogFilter[] = [];
  for (const status of [undefined, ...STATUSES])
    for (const to of [undefined, customers[0]]) for (const tag of [undefined, ...TAGS]) out.push({ status, to, tag });
  for (const bounceReason of REASONS)
    for (const status of [undefined, 'SENT' as const])
      for (const to of [undefined, customers[0]])
        for (const tag of [undefined, TAGS[0]]) out.push({ status, to, tag, bounceReason });
  return out.map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)));
}

/**
 * Walks every page after the first by `nextCursor`, returning the ids in order; `asText` gives each cursor's
 * time as ISO text, the form of the lists whose tables keep text.
 */
async function walk(owner: { accountId: string; test: boolean }, filter: SendLogFilter, limit: number, asText = false) {
  const ids: string[] = [];
  let request: PageRequest = { limit, page: 1, after: null };
  for (let n = 0; n < 100; n++) {
    const page = await accountStore(env, owner.accountId).listEmails(owner, request, filter);
    ids.push(...page.items.map((e) => e.id));
    if (page.nextCursor === null) return ids;
    const after = decodeCursor(page.nextCursor)!;
    expect(after.page).toBe(request.page + 1);
    if (asText) after.at = new Date(after.at).toISOString();
    request = { limit, page: after.page, after };
  }
  throw new Error('the cursor never reached the end');
}

/**
 * The plans of the statements a read of the log prepares (parameters bound as the read binds them), in the
 * account's object.
 */
async function plansOf(accountId: string, read: (db: AccountSql) => Promise<unknown>) {
  const statements: { sql: string; binds: unknown[] }[] = [];
  const db = accountDb(accountId);
  const recording = {
    plane: 'account',
    prepare: (sql: string) => {
      const statement = db.prepare(sql);
      return {
        ...statement,
        bind: (...binds: unknown[]) => {
          statements.push({ sql, binds });
          return statement.bind(...binds);
        },
      };
    },
    batch: db.batch,
  } as unknown as AccountSql;
  await read(recording);
  return Promise.all(
    statements.map(async ({ sql, binds }) => {
      const rows = await db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...binds)
        .all<{ detail: string }>();
      return { sql, plan: rows.results.map((r) => r.detail) };
    }),
  );
}

describe('the send log (src/store/account/send-log.ts)', () => {
  it('answers every filter with the exact total and order, by page and by cursor, through status changes and deletions', async () => {
    const { accountId } = await newAccount('Send log counters');
    const { ids, customers } = await seedLog(accountId, 40);
    await Promise.all(ids.map((id, i) => setStatus(accountId, id, STATUSES[i % STATUSES.length]!)));
    await setStatus(accountId, ids[2]!, 'SENT'); // a second move of the same email (FAILED → SENT)
    for (const bounceReason of REASONS) {
      expect((await truth(accountId, false, { bounceReason })).length, bounceReason).toBeGreaterThan(2);
    }

    const log = accountStore(env, accountId);
    const check = async (when: string) => {
      for (const test of [false, true]) {
        for (const filter of filters(customers)) {
          const expected = await truth(accountId, test, filter);
          const what = `${when} ${test ? 'test' : 'live'} ${JSON.stringify(filter)}`;
          const first = await log.listEmails({ accountId, test }, { limit: 3, page: 1, after: null }, filter);
          expect(first.total, what).toBe(expected.length);
          expect(first.nextCursor === null, what).toBe(expected.length <= 3);
          expect(await walk({ accountId, test }, filter, 3), what).toEqual(expected);
          expect(await walk({ accountId, test }, filter, 3, true), `${what}, cursor times as text`).toEqual(expected);
          const second = await log.listEmails({ accountId, test }, { limit: 3, page: 2, after: null }, filter);
          expect(
            second.items.map((e) => e.id),
            what,
          ).toEqual(expected.slice(3, 6));
        }
      }
    };
    await check('after the moves:');
    // Retention deletes final emails (their tags and recipients first, then the rows).
    const final = ids.filter((_, i) => ['SENT', 'FAILED'].includes(STATUSES[i % STATUSES.length]!)).slice(0, 9);
    expect(await log.deleteEmails(final, new Date(base + 90 * DAY))).toBe(9);
    await check('after deletions:');
  });

  it('reads a page through the index of its most selective filter and counts from counters, whatever the filter', async () => {
    const { accountId } = await newAccount('Send log plans');
    const { customers } = await seedLog(accountId, 6);
    const owner = { accountId, test: false };
    const cursor = { page: 2, at: '2026-10-01T00:01:00.000Z', key: 'em_x' };
    for (const filter of filters(customers)) {
      for (const after of [null, cursor]) {
        const plans = await plansOf(accountId, (db) => listEmails(db, owner, { limit: 20, page: 3, after }, filter));
        const [page, count] = plans;
        const what = JSON.stringify({ filter, after: after !== null });
        // The page's ids: a SEARCH of the filter's index on its leading columns, the account's first.
        const [alias, index, leading] = filter.to
          ? ['r', 'email_recipients_canonical', 'canonical=?']
          : filter.bounceReason
            ? ['r', 'email_recipients_bounce_reason', 'bounce_reason=?']
            : filter.tag
              ? ['t', 'email_tags_log', 'account_id=? AND test=? AND name=? AND value=?']
              : filter.status
                ? ['e', 'emails_log_status', 'account_id=? AND test=? AND status=?']
                : ['e', 'emails_log', 'account_id=? AND test=?'];
        expect(page!.plan[1], what).toContain(`SEARCH ${alias} USING COVERING INDEX ${index} (${leading}`);
        // Then only the page's rows, each by id: no table or index is walked but the page's own list.
        for (const { plan } of plans) {
          expect(
            plan.filter((step) => /^SCAN (?!p$|\(subquery-\d+\)$)/.test(step)),
            what,
          ).toEqual([]);
        }
        // By recipient, that recipient's emails (a customer's few) are sorted, and by bounce reason the bounces'
        // emails (each once); the other indexes hold the log's order.
        const sorts = page!.plan.filter((step) => step.includes('TEMP B-TREE'));
        const expected = filter.to
          ? ['USE TEMP B-TREE FOR ORDER BY']
          : filter.bounceReason
            ? ['USE TEMP B-TREE FOR DISTINCT', 'USE TEMP B-TREE FOR ORDER BY']
            : [];
        expect(sorts, what).toEqual(expected);
        if (filter.to || filter.bounceReason) continue;
        expect(count!.plan.join(' '), what).toMatch(/SEARCH (email_counts|tag_counts) USING PRIMARY KEY/);
      }
    }
  });
});
