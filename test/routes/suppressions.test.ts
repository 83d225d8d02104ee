// The suppression list routes: GET/POST /api/v1/suppressions, DELETE /api/v1/suppressions/{email}.
import { describe, expect, it } from 'vitest';
import { accountDb } from '../support/account-db';
import { call, expectError, newAccount, uniqueAddress, waitForInbox, waitForStatus } from '../support/api';
import type { QueuedEmail, Suppression, SuppressionList } from '../support/responses';
import { newWebhook, waitForEvents } from '../support/webhooks';

const add = (mailKey: string, body: object) =>
  call<Suppression>('POST', '/api/v1/suppressions', { token: mailKey, body });
const list = (mailKey: string, query = '') =>
  call<SuppressionList>('GET', `/api/v1/suppressions${query}`, { token: mailKey });

describe('POST /api/v1/suppressions', () => {
  it('adds the canonical address; mail queued to it afterwards is SUPPRESSED', async () => {
    const { mailKey } = await newAccount();
    const local = `Mixed.${crypto.randomUUID().slice(0, 8)}`;
    const res = await add(mailKey, { email: `"${local}"@Example.COM`, note: 'asked us to stop' });
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({
      email: `${local.toLowerCase()}@example.com`,
      reason: 'manual',
      note: 'asked us to stop',
      emailId: null,
      expiresAt: null,
      createdAt: expect.any(String),
    });
    const queued = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: `${local}@example.com`, subject: 's', text: 'x' },
    });
    await waitForStatus(mailKey, queued.json.data.id, 'SUPPRESSED');
  });

  it('adding a listed address again keeps one entry, as the new one', async () => {
    const { mailKey } = await newAccount();
    const email = uniqueAddress('again');
    await add(mailKey, { email });
    const again = await add(mailKey, { email, reason: 'manual', note: 'second' });
    expect(again.status).toBe(201);
    expect(again.json.data).toMatchObject({ reason: 'manual', note: 'second' });
    expect((await list(mailKey)).json.data.total).toBe(1);
  });

  it('an entry with expiresAt blocks until then; once expired it blocks nothing, though still listed', async () => {
    const { mailKey, accountId } = await newAccount();
    const to = uniqueAddress('expiring');
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const res = await add(mailKey, { email: to, expiresAt });
    expect(res.json.data).toMatchObject({ reason: 'manual', expiresAt });
    const queue = async () =>
      (await call<QueuedEmail>('POST', '/api/v1/emails', { token: mailKey, body: { to, subject: 's', text: 'x' } }))
        .json.data.id;
    await waitForStatus(mailKey, await queue(), 'SUPPRESSED');
    // Its time has come (no job runs for that): the next mail goes out.
    await accountDb(accountId)
      .prepare('UPDATE suppressions SET expires_at = ? WHERE account_id = ? AND email = ?')
      .bind(Date.now() - 1, accountId, to)
      .run();
    await waitForStatus(mailKey, await queue(), 'SENT');
    expect((await list(mailKey)).json.data.suppressions[0]!.email).toBe(to);
  });

  it('suppression.added for a new entry (not for one already listed); suppression.removed on delete', async () => {
    const { mailKey } = await newAccount();
    const { key } = await newWebhook(mailKey, ['suppression.added', 'suppression.removed']);
    const email = uniqueAddress('hooked');
    await add(mailKey, { email, note: 'by hand' });
    await add(mailKey, { email, note: 'again' });
    await call('DELETE', `/api/v1/suppressions/${encodeURIComponent(email)}`, { token: mailKey });
    const events = await waitForEvents(key, ['suppression.added', 'suppression.removed']);
    expect(events.map((e) => e.payload.type).sort()).toEqual(['suppression.added', 'suppression.removed']);
    for (const event of events) {
      expect(event.signatureValid).toBe(true);
      expect(event.payload.data).toEqual({ email, reason: 'manual', emailId: null, expiresAt: null });
    }
  });

  it('400 INVALID_INPUT for a missing or invalid address, an unknown field, a note with a line break, a reason other than manual, an expiry in the past', async () => {
    const { mailKey } = await newAccount();
    for (const body of [
      {},
      { email: 'nope' },
      { email: uniqueAddress(), extra: 1 },
      { email: uniqueAddress(), note: 'a\nb' },
      { email: uniqueAddress(), reason: 'asked us to stop' },
      { email: uniqueAddress(), reason: 'hard_bounce' },
      { email: uniqueAddress(), expiresAt: '2020-01-01T00:00:00Z' },
      { email: uniqueAddress(), expiresAt: 'tomorrow' },
    ]) {
      expectError(await add(mailKey, body), 400, 'INVALID_INPUT');
    }
  });
});

describe('GET /api/v1/suppressions', () => {
  it('pages the account’s list, newest first, and shows no other account’s entries', async () => {
    const { mailKey } = await newAccount();
    const other = await newAccount();
    const emails = [uniqueAddress('a'), uniqueAddress('b'), uniqueAddress('c')];
    for (const email of emails) {
      await add(mailKey, { email });
      await new Promise((r) => setTimeout(r, 5));
    }
    await add(other.mailKey, { email: uniqueAddress('other') });
    const page1 = await list(mailKey, '?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.json.data).toMatchObject({ total: 3, page: 1, totalPages: 2 });
    expect(page1.json.data.suppressions.map((s) => s.email)).toEqual([emails[2], emails[1]]);
    const page2 = await list(mailKey, '?limit=2&page=2');
    expect(page2.json.data.suppressions.map((s) => s.email)).toEqual([emails[0]]);
  });

  it('400 INVALID_INPUT for a page or limit out of range', async () => {
    const { mailKey } = await newAccount();
    expectError(await list(mailKey, '?limit=0'), 400, 'INVALID_INPUT');
    expectError(await list(mailKey, '?page=x'), 400, 'INVALID_INPUT');
  });
});

describe('DELETE /api/v1/suppressions/{email}', () => {
  it('removes the address (any spelling); mail reaches it again', async () => {
    const { mailKey } = await newAccount();
    const email = uniqueAddress('removed');
    await add(mailKey, { email });
    const res = await call('DELETE', `/api/v1/suppressions/${encodeURIComponent(email.toUpperCase())}`, {
      token: mailKey,
    });
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ email, deleted: true });
    expect((await list(mailKey)).json.data.total).toBe(0);
    const queued = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: email, subject: 's', text: 'x' },
    });
    await waitForStatus(mailKey, queued.json.data.id, 'SENT');
    expect(await waitForInbox(email)).toHaveLength(1);
  });

  it('404 SUPPRESSION_NOT_FOUND for an address not listed, or listed by another account', async () => {
    const { mailKey } = await newAccount();
    const other = await newAccount();
    const email = uniqueAddress('theirs');
    await add(other.mailKey, { email });
    expectError(
      await call('DELETE', `/api/v1/suppressions/${encodeURIComponent(email)}`, { token: mailKey }),
      404,
      'SUPPRESSION_NOT_FOUND',
    );
    expect((await list(other.mailKey)).json.data.total).toBe(1);
  });

  it('400 INVALID_INPUT for a path that is not an address', async () => {
    const { mailKey } = await newAccount();
    expectError(await call('DELETE', '/api/v1/suppressions/not-an-address', { token: mailKey }), 400, 'INVALID_INPUT');
  });
});
