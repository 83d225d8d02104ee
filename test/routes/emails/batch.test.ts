// POST /api/v1/emails/batch: up to 100 route-1 emails, all or none.
import { describe, expect, it } from 'vitest';
import { accountDb } from '../../support/account-db';
import {
  admin,
  call,
  expectError,
  fetchWith,
  newAccount,
  sendLogTotal,
  uniqueAddress,
  waitForInbox,
  waitForStatus,
} from '../../support/api';
import type { BatchQueued } from '../../support/responses';
import { createTemplate } from '../../support/templates';

const PATH = '/api/v1/emails/batch';
const batch = (token: string, emails: unknown[], headers?: Record<string, string>) =>
  call<BatchQueued>('POST', PATH, { token, body: { emails }, headers });
const email = (to: string, subject = 'Batch') => ({ to, subject, text: `Hello ${to}` });

describe('POST /api/v1/emails/batch', () => {
  it('queues every email, answers in input order, and each arrives and ends SENT', async () => {
    const { mailKey } = await newAccount();
    const to = [uniqueAddress('b0'), uniqueAddress('b1'), uniqueAddress('b2')];
    const res = await batch(mailKey, [
      email(to[0]!, 'first'),
      { ...email(to[1]!, 'second'), cc: uniqueAddress('bcc'), tags: [{ name: 'n', value: '1' }] },
      { ...email(to[2]!, 'third'), scheduledAt: new Date(Date.now() + 3_600_000).toISOString() },
    ]);
    expect(res.status).toBe(200);
    expect(res.json.data.map((e) => e.status)).toEqual(['QUEUED', 'QUEUED', 'SCHEDULED']);
    const [first, second] = await Promise.all([waitForInbox(to[0]!), waitForInbox(to[1]!)]);
    expect(first[0]!.subject).toBe('first');
    expect(second[0]!.subject).toBe('second');
    expect(first[0]!.messageId).toBe(`<${res.json.data[0]!.id}@postcode.dev>`);
    await waitForStatus(mailKey, res.json.data[1]!.id, 'SENT');
    await waitForStatus(mailKey, res.json.data[2]!.id, 'SCHEDULED');
    expect(await sendLogTotal(mailKey)).toBe(3);
  });

  it('100 emails in one request', async () => {
    const { mailKey } = await newAccount();
    const res = await batch(
      mailKey,
      Array.from({ length: 100 }, (_, i) => email(uniqueAddress(`hundred${i}`))),
    );
    expect(res.status).toBe(200);
    expect(new Set(res.json.data.map((e) => e.id)).size).toBe(100);
    expect(await sendLogTotal(mailKey)).toBe(100);
  });

  it('all or none: one invalid email refuses the batch, naming emails[i].field; nothing is stored', async () => {
    const { mailKey } = await newAccount();
    const good = email(uniqueAddress('good'));
    const cases: [unknown[], string][] = [
      [[good, { ...good, to: 'not an address' }], 'emails[1].to'],
      [[good, good, { ...good, subject: undefined }], 'emails[2].subject'],
      [[{ ...good, attachments: [{ filename: 'x.exe', content: 'TVo=' }] }], 'emails[0].attachments[0].filename'],
      [[good, { ...good, headers: { From: 'x@example.com' } }], 'emails[1].headers'],
      [[good, { ...good, templateId: 'tpl_unknown0000000000' }], 'emails[1].templateId'],
      [[good, { ...good, vars: {}, text: 'Hi {{name}}' }], 'emails[1].vars'],
      [[], 'emails'],
      [Array.from({ length: 101 }, () => good), 'emails'],
    ];
    for (const [emails, field] of cases) {
      const res = await batch(mailKey, emails);
      expect([400, 404], JSON.stringify(res.json)).toContain(res.status);
      expect(res.json.error.message.startsWith(field), `${field}: ${res.json.error.message}`).toBe(true);
    }
    expect(await sendLogTotal(mailKey)).toBe(0);
  });

  it('a missing template (404) or an unverified sender (403) of one email names it; nothing is stored', async () => {
    const { mailKey } = await newAccount();
    const other = await newAccount();
    const good = email(uniqueAddress('good'));
    const missing = await batch(mailKey, [good, { ...good, templateId: 'tpl_unknown0000000000' }]);
    expectError(missing, 404, 'TEMPLATE_NOT_FOUND');
    expect(missing.json.error.message).toMatch(/^emails\[1\]\.templateId: /);
    const sender = await batch(mailKey, [good, good, { ...good, senderEmailId: other.senderId }]);
    expectError(sender, 403, 'SENDER_NOT_VERIFIED');
    expect(sender.json.error.message).toMatch(/^emails\[2\]\.senderEmailId: /);
    const single = await batch(mailKey, [{ ...good, templateId: 'tpl_unknown0000000000' }]);
    expect(single.json.error.message).toMatch(/^emails\[0\]\.templateId: /);
    expect(await sendLogTotal(mailKey)).toBe(0);
  });

  it('templates work per email', async () => {
    const { mailKey } = await newAccount();
    const template = await createTemplate(mailKey, { textBody: 'Hello {{name}}' });
    const to = uniqueAddress('tpl');
    const res = await batch(mailKey, [{ to, subject: 'Own subject', templateId: template.id, vars: { name: 'Ada' } }]);
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.subject).toBe('Own subject');
    expect(mail!.text.trim()).toBe('Hello Ada');
  });

  it('Idempotency-Key covers the whole batch: a replay sends nothing more, another body is a conflict', async () => {
    const { mailKey } = await newAccount();
    const emails = [email(uniqueAddress('idem')), email(uniqueAddress('idem'))];
    const key = { 'Idempotency-Key': `batch-${crypto.randomUUID()}` };
    const first = await batch(mailKey, emails, key);
    const again = await batch(mailKey, emails, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.json.data).toEqual(first.json.data);
    expectError(await batch(mailKey, [emails[0]], key), 409, 'IDEMPOTENCY_CONFLICT');
    expect(await sendLogTotal(mailKey)).toBe(2);
  });

  it('the mail rate limits count every email of the batch', async () => {
    const { mailKey } = await newAccount();
    const limited = { RATE_MAIL_PER_KEY: '5' };
    const over = await fetchWith<BatchQueued>(limited, 'POST', PATH, {
      token: mailKey,
      body: { emails: Array.from({ length: 6 }, () => email(uniqueAddress('rate'))) },
    });
    expectError(over, 429, 'RATE_LIMITED');
    expect(Number(over.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    const three = await fetchWith<BatchQueued>(limited, 'POST', PATH, {
      token: mailKey,
      body: { emails: Array.from({ length: 3 }, () => email(uniqueAddress('rate'))) },
    });
    expect(three.status).toBe(200);
    // One hit of the refused request was counted before its size was known, then three.
    expect(three.headers.get('RateLimit-Remaining')).toBe('1');
    const single = await fetchWith(limited, 'POST', '/api/v1/emails', {
      token: mailKey,
      body: email(uniqueAddress('rate')),
    });
    expect(single.status).toBe(200);
    expect(single.headers.get('RateLimit-Remaining')).toBe('0');
  });

  it('the daily allowance counts every recipient of every email; over it, nothing is stored', async () => {
    const { accountId, mailKey } = await newAccount();
    const day = new Date().toISOString().slice(0, 10);
    const usage = await accountDb(accountId)
      .prepare('SELECT recipients FROM daily_usage WHERE day = ?')
      .bind(day)
      .first<{ recipients: number }>();
    const used = usage?.recipients ?? 0;
    try {
      expect((await admin('PUT', '/admin/v1/settings', { dailyAllowance: used + 3 })).status).toBe(200);
      const three = await batch(mailKey, [
        email(uniqueAddress('allow')),
        { ...email(uniqueAddress('allow')), bcc: uniqueAddress('allow') },
      ]);
      expect(three.status).toBe(200);
      const refused = await batch(mailKey, [email(uniqueAddress('allow'))]);
      expectError(refused, 429, 'DAILY_LIMIT_REACHED');
      expect(refused.json.error.resetAt).toMatch(/T00:00:00.000Z$/);
      expect(await sendLogTotal(mailKey)).toBe(2);
    } finally {
      await admin('PUT', '/admin/v1/settings', { dailyAllowance: null });
    }
  });

  it('security: a server_otp key or no key is refused', async () => {
    const { serverKey } = await newAccount();
    expectError(await batch(serverKey, [email(uniqueAddress('sec'))]), 403, 'SCOPE_REQUIRED');
    expectError(await call('POST', PATH, { body: { emails: [email(uniqueAddress('sec'))] } }), 401, 'UNAUTHORIZED');
  });
});
