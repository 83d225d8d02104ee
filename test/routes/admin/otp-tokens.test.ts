// A public OTP token's bot check as the operator sets it: on create and PATCH /admin/v1/otp-tokens/{tokenId}, shown as
// its site key only (never the secret, sealed at rest), cleared with null; the allowlist and the send policy change
// the same way.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { admin, expectError, newAccount } from '../../support/api';
import { TURNSTILE_TEST_SECRETS, TURNSTILE_TEST_SITE_KEY } from '../../support/node/turnstile-stub';
import type { OtpToken, OtpTokenList, OtpTokenView } from '../../support/responses';

const SETTING = { siteKey: TURNSTILE_TEST_SITE_KEY, secret: TURNSTILE_TEST_SECRETS.passes };

async function newToken(body: unknown = {}) {
  const { accountId } = await newAccount();
  const res = await admin<OtpToken>('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, body);
  expect(res.status).toBe(201);
  return { accountId, created: res.json.data };
}

const change = (tokenId: string, body: unknown) =>
  admin<OtpTokenView>('PATCH', `/admin/v1/otp-tokens/${tokenId}`, body);

const storedRow = (id: string) =>
  env.DB.prepare('SELECT turnstile_site_key, turnstile_secret FROM otp_tokens WHERE id = ?')
    .bind(id)
    .first<{ turnstile_site_key: string | null; turnstile_secret: string | null }>();

describe('the Turnstile setting of a public OTP token', () => {
  it('is shown as its site key on create and in the list, never its secret; null when not set', async () => {
    const { accountId, created } = await newToken({ turnstile: SETTING });
    expect(created.turnstile).toEqual({ siteKey: SETTING.siteKey });
    const list = await admin<OtpTokenList>('GET', `/admin/v1/accounts/${accountId}/otp-tokens`);
    const listed = list.json.data.otpTokens.find((t) => t.id === created.id);
    expect(listed).toMatchObject({ turnstile: { siteKey: SETTING.siteKey } });
    expect(JSON.stringify([created, list.json])).not.toContain(SETTING.secret);
    expect((await newToken()).created.turnstile).toBeNull();
  });

  it('keeps the secret sealed at rest, and the audit log never holds it', async () => {
    const { accountId, created } = await newToken({ turnstile: SETTING });
    const row = await storedRow(created.id);
    expect(row?.turnstile_site_key).toBe(SETTING.siteKey);
    expect(row?.turnstile_secret).toMatch(/^v1\./);
    expect(row?.turnstile_secret).not.toContain(SETTING.secret);
    const audit = await env.DB.prepare('SELECT action, detail FROM audit_log WHERE account_id = ? AND target = ?')
      .bind(accountId, created.id)
      .all<{ action: string; detail: string }>();
    expect(audit.results.map((r) => r.action)).toEqual(['otp_token.created']);
    expect(JSON.stringify(audit.results)).not.toContain(SETTING.secret);
  });

  it('PATCH sets, changes and clears it; a field left out keeps its value', async () => {
    const { created } = await newToken({ allowedIps: ['203.0.113.0/24'] });
    const set = await change(created.id, { turnstile: SETTING });
    expect(set.status).toBe(200);
    expect(set.json.data).toMatchObject({
      id: created.id,
      allowedIps: ['203.0.113.0/24'],
      turnstile: { siteKey: SETTING.siteKey },
      revokedAt: null,
    });
    expect(JSON.stringify(set.json)).not.toContain(SETTING.secret);
    const ips = await change(created.id, { allowedIps: ['198.51.100.0/24'] });
    expect(ips.json.data).toMatchObject({ allowedIps: ['198.51.100.0/24'], turnstile: { siteKey: SETTING.siteKey } });
    expect((await change(created.id, {})).json.data).toEqual(ips.json.data);
    const cleared = await change(created.id, { turnstile: null });
    expect(cleared.json.data).toMatchObject({ allowedIps: ['198.51.100.0/24'], turnstile: null });
    expect(await storedRow(created.id)).toEqual({ turnstile_site_key: null, turnstile_secret: null });
  });

  it('PATCH of an unknown or revoked token → 404 NOT_FOUND', async () => {
    expectError(await change('otk_doesnotexistdoesnotex', { turnstile: null }), 404, 'NOT_FOUND');
    const { accountId, created } = await newToken();
    await env.DB.prepare('UPDATE otp_tokens SET revoked_at = ? WHERE id = ? AND account_id = ?')
      .bind(new Date().toISOString(), created.id, accountId)
      .run();
    expectError(await change(created.id, { turnstile: SETTING }), 404, 'NOT_FOUND');
  });

  it('400 INVALID_INPUT for a setting without its secret, with spaces, too long, or an unknown field', async () => {
    const { accountId, created } = await newToken();
    for (const turnstile of [
      { siteKey: SETTING.siteKey },
      { siteKey: 'has space', secret: SETTING.secret },
      { siteKey: SETTING.siteKey, secret: 'x'.repeat(201) },
      { ...SETTING, mode: 'invisible' },
    ]) {
      const created2 = await admin('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, { turnstile });
      expectError(created2, 400, 'INVALID_INPUT');
      expect(created2.json.error.message).toContain('turnstile');
      expectError(await change(created.id, { turnstile }), 400, 'INVALID_INPUT');
    }
    expectError(await change(created.id, { allowedIps: ['not an address'] }), 400, 'INVALID_INPUT');
  });
});

describe('the send policy of a public OTP token', () => {
  const OPEN = { domainSendsPerHour: null, blockDisposable: false, blockSubaddresses: false };

  it('is open unless set; shown in full on create, PATCH and the list, and written to the audit log', async () => {
    expect((await newToken()).created.policy).toEqual(OPEN);
    const { accountId, created } = await newToken({ policy: { blockDisposable: true } });
    expect(created.policy).toEqual({ ...OPEN, blockDisposable: true });
    const changed = await change(created.id, { policy: { domainSendsPerHour: 20, blockSubaddresses: true } });
    const policy = { domainSendsPerHour: 20, blockDisposable: true, blockSubaddresses: true };
    expect(changed.json.data.policy).toEqual(policy);
    expect((await change(created.id, { allowedIps: [] })).json.data.policy).toEqual(policy);
    const list = await admin<OtpTokenList>('GET', `/admin/v1/accounts/${accountId}/otp-tokens`);
    expect(list.json.data.otpTokens.find((t) => t.id === created.id)?.policy).toEqual(policy);
    const cleared = await change(created.id, { policy: { domainSendsPerHour: null, blockDisposable: false } });
    expect(cleared.json.data.policy).toEqual({ ...OPEN, blockSubaddresses: true });
    const audit = await env.DB.prepare(
      'SELECT detail FROM audit_log WHERE account_id = ? AND target = ? ORDER BY rowid',
    )
      .bind(accountId, created.id)
      .all<{ detail: string }>();
    expect(audit.results.map((r) => JSON.parse(r.detail).policy)).toEqual([
      { ...OPEN, blockDisposable: true },
      { domainSendsPerHour: 20, blockSubaddresses: true },
      undefined,
      { domainSendsPerHour: null, blockDisposable: false },
    ]);
  });

  it('400 INVALID_INPUT for a cap below 1 or not whole, a flag not a boolean, or an unknown field', async () => {
    const { accountId, created } = await newToken();
    for (const policy of [
      { domainSendsPerHour: 0 },
      { domainSendsPerHour: 2.5 },
      { blockDisposable: 'yes' },
      { blockPlus: true },
    ]) {
      const refused = await admin('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, { policy });
      expectError(refused, 400, 'INVALID_INPUT');
      expect(refused.json.error.message).toContain('policy');
      expectError(await change(created.id, { policy }), 400, 'INVALID_INPUT');
    }
  });
});
