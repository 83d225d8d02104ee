// The audit log page: who did what in the account, newest first, paged.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { uniqueAddress } from '../../support/api';
import { signedInMember } from '../../support/dashboard';

describe('GET /dashboard/audit-log', () => {
  it('shows what members and the operator did, newest first', async () => {
    const { browser, email, accountId } = await signedInMember('owner');
    const invitee = uniqueAddress('audited');
    await browser.post('/dashboard/members', { email: invitee, role: 'viewer' });
    const page = await browser.get('/dashboard/audit-log');
    expect(page.status).toBe(200);
    const added = page.text.indexOf(`member.added</code></td><td data-label="On">${invitee}`);
    const signedIn = page.text.indexOf('member.signed_in');
    expect(added).toBeGreaterThan(-1);
    expect(signedIn).toBeGreaterThan(added);
    expect(page.text).toContain('>operator<');
    expect(page.text).toContain(email);
    const { n } = (await env.DB.prepare('SELECT COUNT(*) AS n FROM audit_log WHERE account_id = ?')
      .bind(accountId)
      .first<{ n: number }>())!;
    expect(page.text).toContain(`${n} entries`);
  });

  it('pages of 50 with a link to the older ones; another account sees none of them', async () => {
    const { browser, accountId } = await signedInMember('viewer');
    const insert = env.DB.prepare(
      "INSERT INTO audit_log (id, account_id, actor, action, created_at) VALUES (?, ?, 'operator', 'test.entry', ?)",
    );
    await env.DB.batch(
      Array.from({ length: 60 }, (_, i) =>
        insert.bind(`aud_test${accountId}${i}`, accountId, new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString()),
      ),
    );
    const first = await browser.get('/dashboard/audit-log');
    const older = /href="(\/dashboard\/audit-log\?after=[A-Za-z0-9_-]+)"/.exec(first.text)![1]!;
    const second = await browser.get(older);
    expect(second.status).toBe(200);
    const rows = (html: string) => html.match(/<tr><td/g)?.length ?? 0;
    expect(rows(first.text) + rows(second.text)).toBe(62); // 60, the operator's addition and the sign-in
    expect(rows(first.text)).toBe(50);
    const stranger = await signedInMember('owner');
    expect((await stranger.browser.get('/dashboard/audit-log')).text).not.toContain('test.entry');
    expect((await browser.get('/dashboard/audit-log?after=garbage!')).status).toBe(400);
  });
});
