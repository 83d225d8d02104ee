import { describe, expect, it } from 'vitest';
import { call, expectError, inbox, newAccount, sendLogTotal, uniqueAddress, waitForInbox } from '../support/api';
import type { QueuedEmail, SavedTemplate } from '../support/responses';

const withKey = (key: string) => ({ 'Idempotency-Key': key });

describe('Idempotency-Key on POST /api/v1/emails', () => {
  it('replays the first response for the same key and body, and sends one mail', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('idem');
    const body = { to, subject: 'Once', text: 'only once' };
    const first = await call('POST', '/api/v1/emails', { token: mailKey, body, headers: withKey('order-1') });
    expect(first.status).toBe(200);
    const again = await call('POST', '/api/v1/emails', { token: mailKey, body, headers: withKey('order-1') });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    await waitForInbox(to);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await inbox(to)).toHaveLength(1);
    expect(await sendLogTotal(mailKey)).toBe(1);
  });

  it('409 IDEMPOTENCY_CONFLICT for the same key with another body', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('idem');
    await call('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 'A', text: 'a' },
      headers: withKey('k-1'),
    });
    const other = await call('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 'B', text: 'b' },
      headers: withKey('k-1'),
    });
    expectError(other, 409, 'IDEMPOTENCY_CONFLICT');
    expect(await sendLogTotal(mailKey)).toBe(1);
  });

  it('8 concurrent duplicates produce exactly one email', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('idem-race');
    const body = { to, subject: 'Race', text: 'r' };
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        call<QueuedEmail>('POST', '/api/v1/emails', { token: mailKey, body, headers: withKey('race-1') }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of results) expect([200, 409]).toContain(r.status);
    expect(new Set(ok.map((r) => r.json.data.id)).size).toBe(1);
    await waitForInbox(to);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await inbox(to)).toHaveLength(1);
    expect(await sendLogTotal(mailKey)).toBe(1);
  });

  it('keys are per account: the same key in two accounts sends two mails', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const to = uniqueAddress('idem-acc');
    const body = { to, subject: 'Per account', text: 'x' };
    const ra = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: a.mailKey,
      body,
      headers: withKey('shared'),
    });
    const rb = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: b.mailKey,
      body,
      headers: withKey('shared'),
    });
    expect(ra.status).toBe(200);
    expect(rb.status).toBe(200);
    expect(rb.json.data.id).not.toBe(ra.json.data.id);
    await waitForInbox(to, 2);
  });

  it('a failed request frees its key for a corrected retry', async () => {
    const { mailKey, senderId } = await newAccount();
    const other = await newAccount();
    const to = uniqueAddress('idem-fix');
    const bad = await call('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 's', text: 't', senderEmailId: other.senderId },
      headers: withKey('fix-1'),
    });
    expectError(bad, 403, 'SENDER_NOT_VERIFIED');
    const fixed = await call('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 's', text: 't', senderEmailId: senderId },
      headers: withKey('fix-1'),
    });
    expect(fixed.status).toBe(200);
  });

  it('400 INVALID_INPUT for a key over 255 characters or with control characters', async () => {
    const { mailKey } = await newAccount();
    const body = { to: uniqueAddress(), subject: 's', text: 't' };
    expectError(
      await call('POST', '/api/v1/emails', { token: mailKey, body, headers: withKey('k'.repeat(256)) }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await call('POST', '/api/v1/emails', { token: mailKey, body, headers: withKey('a b') }),
      400,
      'INVALID_INPUT',
    );
    expect(
      (await call('POST', '/api/v1/emails', { token: mailKey, body, headers: withKey('k'.repeat(255)) })).status,
    ).toBe(200);
  });
});

describe('Idempotency-Key on the template routes', () => {
  it('POST /api/v1/templates/send replays and sends once', async () => {
    const { mailKey } = await newAccount();
    const tpl = await call<SavedTemplate>('POST', '/api/v1/templates', {
      token: mailKey,
      body: { name: 't', subject: 'Hi {{n}}', textBody: 'x' },
    });
    const to = uniqueAddress('idem-tpl');
    const body = { to, templateId: tpl.json.data.id, vars: { n: 1 } };
    const first = await call('POST', '/api/v1/templates/send', { token: mailKey, body, headers: withKey('tpl-1') });
    const again = await call('POST', '/api/v1/templates/send', { token: mailKey, body, headers: withKey('tpl-1') });
    expect(again.json).toEqual(first.json);
    expect(await sendLogTotal(mailKey)).toBe(1);
  });

  it('POST /api/v1/templates/send-test replays and sends once; the same key on another route conflicts', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('idem-test');
    const first = await call('POST', '/api/v1/templates/send-test', {
      token: mailKey,
      body: { to },
      headers: withKey('t-1'),
    });
    const again = await call('POST', '/api/v1/templates/send-test', {
      token: mailKey,
      body: { to },
      headers: withKey('t-1'),
    });
    expect(again.json).toEqual(first.json);
    const elsewhere = await call('POST', '/api/v1/emails', { token: mailKey, body: { to }, headers: withKey('t-1') });
    // Validation runs first (400 for the missing subject); a valid body on another route conflicts.
    expectError(elsewhere, 400, 'INVALID_INPUT');
    const conflict = await call('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 's', text: 't' },
      headers: withKey('t-1'),
    });
    expectError(conflict, 409, 'IDEMPOTENCY_CONFLICT');
    expect(await sendLogTotal(mailKey)).toBe(1);
  });
});
