// Daily warm-up allowance (decisions.md "Mail"): recipients per UTC day for route 1, set by the operator
// with PUT /admin/v1/settings { dailyAllowance }; null = unlimited.
import { afterEach, describe, expect, it } from 'vitest';
import { accountDb } from '../support/account-db';
import {
  type ApiResponse,
  admin,
  call,
  expectError,
  inbox,
  newAccount,
  sendLogTotal,
  uniqueAddress,
  waitForInbox,
} from '../support/api';
import type { QueuedEmail, SavedTemplate, Settings, TemplateQueued } from '../support/responses';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const queue = (token: string, body: unknown, headers?: Record<string, string>) =>
  call<QueuedEmail>('POST', '/api/v1/emails', { token, body, headers });

const mail = (to: string | string[]) => ({ to, subject: 'Warm-up', text: 'hello' });

async function setAllowance(dailyAllowance: number | null) {
  const res = await admin<Settings>('PUT', '/admin/v1/settings', { dailyAllowance });
  expect(res.status).toBe(200);
  expect(res.json.data.dailyAllowance).toBe(dailyAllowance);
}

/**
 * Recipients the account has already had accepted today. The allowance is counted per account (in the
 * account's own database), so each test sets its allowance relative to what its account used.
 */
async function usedToday(accountId: string): Promise<number> {
  const day = new Date().toISOString().slice(0, 10);
  const row = await accountDb(accountId)
    .prepare('SELECT recipients FROM daily_usage WHERE day = ?')
    .bind(day)
    .first<{ recipients: number }>();
  return row?.recipients ?? 0;
}

/** Allows exactly `room` more recipients today to the account. */
async function allowMore(accountId: string, room: number) {
  await setAllowance((await usedToday(accountId)) + room);
}

const nextUtcMidnight = (ms: number) => {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
};

function expectDailyLimit(res: ApiResponse) {
  expectError(res, 429, 'DAILY_LIMIT_REACHED');
  expect(res.headers.get('Retry-After')).toMatch(/^\d+$/);
}

afterEach(async () => {
  const res = await admin('PUT', '/admin/v1/settings', { frozen: false, dailyAllowance: null });
  expect(res.status).toBe(200);
});

describe('daily warm-up allowance on POST /api/v1/emails', () => {
  it('allowance 0 → 429 DAILY_LIMIT_REACHED with resetAt = next UTC midnight and a matching Retry-After; nothing stored or sent', async () => {
    const { mailKey } = await newAccount();
    await setAllowance(0);
    const to = uniqueAddress('warmup-zero');
    const before = nextUtcMidnight(Date.now());
    const res = await queue(mailKey, mail(to));
    const after = nextUtcMidnight(Date.now());

    expectDailyLimit(res);
    const resetAt = res.json.error.resetAt!;
    expect(resetAt).toMatch(ISO_MS);
    expect([before, after]).toContain(resetAt);
    const expectedSeconds = (Date.parse(resetAt) - Date.now()) / 1000;
    expect(Math.abs(Number(res.headers.get('Retry-After')) - expectedSeconds)).toBeLessThanOrEqual(2);

    // More recipients change nothing.
    expectDailyLimit(await queue(mailKey, mail([uniqueAddress('warmup-zero'), uniqueAddress('warmup-zero')])));
    expect(await sendLogTotal(mailKey)).toBe(0);

    // Barrier: once a later email has arrived, the refused one would have arrived too.
    await setAllowance(null);
    const barrier = uniqueAddress('warmup-barrier');
    expect((await queue(mailKey, mail(barrier))).status).toBe(200);
    await waitForInbox(barrier);
    expect(await inbox(to)).toHaveLength(0);
    expect(await sendLogTotal(mailKey)).toBe(1);
  });

  it('allowance 3: 2 recipients pass, 2 more would exceed → 429, 1 more passes, then everything → 429', async () => {
    const { accountId, mailKey } = await newAccount();
    await allowMore(accountId, 3);
    const [a, b, c, d, e] = Array.from({ length: 5 }, () => uniqueAddress('warmup-three'));

    expect((await queue(mailKey, mail([a!, b!]))).status).toBe(200);
    expectDailyLimit(await queue(mailKey, mail([c!, d!])));
    expect((await queue(mailKey, mail(c!))).status).toBe(200);
    expectDailyLimit(await queue(mailKey, mail(d!)));
    expectDailyLimit(await queue(mailKey, mail([d!, e!])));

    expect(await sendLogTotal(mailKey)).toBe(2);
    await waitForInbox(a!);
    await waitForInbox(b!);
    await waitForInbox(c!);
    expect(await inbox(d!)).toHaveLength(0);
    expect(await inbox(e!)).toHaveLength(0);
  });

  it('duplicate recipients count once', async () => {
    const { accountId, mailKey } = await newAccount();
    await allowMore(accountId, 2);
    const a = uniqueAddress('warmup-dup');
    const b = uniqueAddress('warmup-dup');
    expect((await queue(mailKey, mail([a, b, a.toUpperCase(), b]))).status).toBe(200);
    // Exactly two were counted: no room is left.
    expectDailyLimit(await queue(mailKey, mail(uniqueAddress('warmup-dup'))));

    await allowMore(accountId, 1);
    const c = uniqueAddress('warmup-dup');
    expect((await queue(mailKey, mail([c, c, c]))).status).toBe(200);
    expectDailyLimit(await queue(mailKey, mail(uniqueAddress('warmup-dup'))));
  });

  it('concurrent sends never pass the allowance', async () => {
    const { accountId, mailKey } = await newAccount();
    await allowMore(accountId, 5);
    const results = await Promise.all(
      Array.from({ length: 12 }, () => queue(mailKey, mail(uniqueAddress('warmup-race')))),
    );
    const accepted = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(accepted).toHaveLength(5);
    for (const res of refused) expectDailyLimit(res);
    expect(await sendLogTotal(mailKey)).toBe(5);
  });

  it('lifting the allowance (null) → accepted again, and the mail arrives', async () => {
    const { mailKey } = await newAccount();
    await setAllowance(0);
    expectDailyLimit(await queue(mailKey, mail(uniqueAddress('warmup-lift'))));

    await setAllowance(null);
    const settings = await admin<Settings>('GET', '/admin/v1/settings');
    expect(settings.json.data.dailyAllowance).toBeNull();
    const to = uniqueAddress('warmup-lift');
    const res = await queue(mailKey, mail(to));
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ id: expect.stringMatching(/^em_/), status: 'QUEUED' });
    await waitForInbox(to);
  });

  it('an Idempotency-Key replay returns the first response even when the allowance is used up', async () => {
    const { accountId, mailKey } = await newAccount();
    await allowMore(accountId, 1);
    const body = mail(uniqueAddress('warmup-idem'));
    const headers = { 'Idempotency-Key': `warmup-${crypto.randomUUID()}` };
    const first = await queue(mailKey, body, headers);
    expect(first.status).toBe(200);
    expectDailyLimit(await queue(mailKey, mail(uniqueAddress('warmup-idem'))));

    const replay = await queue(mailKey, body, headers);
    expect(replay.status).toBe(200);
    expect(replay.json.data.id).toBe(first.json.data.id);
    expect(await sendLogTotal(mailKey)).toBe(1);
  });

  it('routes 3 and 4 (templates/send, send-test) are not limited by the allowance', async () => {
    const { mailKey } = await newAccount();
    const template = await call<SavedTemplate>('POST', '/api/v1/templates', {
      token: mailKey,
      body: { name: 'warm-up', subject: 'Template mail', textBody: 'Hello {{who}}' },
    });
    expect(template.status).toBe(201);
    await setAllowance(0);

    expectDailyLimit(await queue(mailKey, mail(uniqueAddress('warmup-route1'))));

    const viaTemplate = uniqueAddress('warmup-route3');
    const route3 = await call<TemplateQueued>('POST', '/api/v1/templates/send', {
      token: mailKey,
      body: { to: viaTemplate, templateId: template.json.data.id, vars: { who: 'you' } },
    });
    expect(route3.status).toBe(200);
    expect(route3.json.data).toMatchObject({ status: 'QUEUED', templateId: template.json.data.id });

    const viaTest = uniqueAddress('warmup-route4');
    const route4 = await call<QueuedEmail>('POST', '/api/v1/templates/send-test', {
      token: mailKey,
      body: { to: viaTest },
    });
    expect(route4.status).toBe(200);
    expect(route4.json.data).toMatchObject({ status: 'QUEUED' });

    // Route 1 is still refused afterwards.
    expectDailyLimit(await queue(mailKey, mail(uniqueAddress('warmup-route1'))));
    await waitForInbox(viaTemplate);
    await waitForInbox(viaTest);
    expect(await sendLogTotal(mailKey)).toBe(2);
  });

  it('a request refused for another reason (403 SENDER_NOT_VERIFIED, 404, 400) uses up no allowance', async () => {
    const mine = await newAccount();
    const other = await newAccount();
    await allowMore(mine.accountId, 1);

    for (const senderEmailId of [other.senderId, 'snd_unknownunknown']) {
      const res = await queue(mine.mailKey, { ...mail(uniqueAddress('warmup-403')), senderEmailId });
      expectError(res, 403, 'SENDER_NOT_VERIFIED');
    }
    const missingTemplate = await queue(mine.mailKey, {
      to: uniqueAddress('warmup-404'),
      subject: 's',
      templateId: 'tpl_unknownunknown',
    });
    expectError(missingTemplate, 404, 'TEMPLATE_NOT_FOUND');
    const missingVars = await queue(mine.mailKey, {
      to: uniqueAddress('warmup-400'),
      subject: 'Hi {{name}}',
      text: 't',
    });
    expectError(missingVars, 400, 'INVALID_INPUT');

    // The one recipient of room is still there, and then it is gone.
    expect((await queue(mine.mailKey, mail(uniqueAddress('warmup-ok')))).status).toBe(200);
    expectDailyLimit(await queue(mine.mailKey, mail(uniqueAddress('warmup-after'))));
  });
});
