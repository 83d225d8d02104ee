// Retries through the real queue (retry delays are 0 s in tests; max_retries and the DLQ from wrangler.toml).
import { describe, expect, it } from 'vitest';
import { accountDb } from '../support/account-db';
import { call, inbox, newAccount, uniqueAddress, waitForStatus } from '../support/api';
import type { QueuedEmail } from '../support/responses';

describe('retries through the real queue', () => {
  it('451 once → retried and delivered exactly once, SENT', async () => {
    const { accountId, mailKey } = await newAccount();
    const to = uniqueAddress('tempfail-once');
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 'retry', text: 'x' },
    });
    await waitForStatus(mailKey, res.json.data.id, 'SENT', 20_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await inbox(to)).toHaveLength(1);
    const row = await accountDb(accountId)
      .prepare('SELECT attempts FROM emails WHERE id = ?')
      .bind(res.json.data.id)
      .first<{ attempts: number }>();
    expect(row!.attempts).toBe(2);
  });

  it('always 451 → FAILED after the retries run out (dead-letter queue), never SENT', async () => {
    const { accountId, mailKey } = await newAccount();
    const to = uniqueAddress('tempfail-always');
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 'never', text: 'x' },
    });
    await waitForStatus(mailKey, res.json.data.id, 'FAILED', 25_000);
    const row = await accountDb(accountId)
      .prepare('SELECT attempts, last_reply, sent_at FROM emails WHERE id = ?')
      .bind(res.json.data.id)
      .first<{ attempts: number; last_reply: string; sent_at: string | null }>();
    expect(row!.attempts).toBe(6); // the first try and 5 retries
    expect(row!.last_reply).toMatch(/451/);
    expect(row!.sent_at).toBeNull();
    expect(await inbox(to)).toHaveLength(0);
  });

  it('550 → FAILED at once, not retried', async () => {
    const { accountId, mailKey } = await newAccount();
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: uniqueAddress('reject550'), subject: 'no', text: 'x' },
    });
    await waitForStatus(mailKey, res.json.data.id, 'FAILED');
    await new Promise((r) => setTimeout(r, 1500));
    const row = await accountDb(accountId)
      .prepare('SELECT attempts FROM emails WHERE id = ?')
      .bind(res.json.data.id)
      .first<{ attempts: number }>();
    expect(row!.attempts).toBe(1);
  });
});
