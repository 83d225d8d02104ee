// An API key's and a public OTP token's last use: written at most once per period per isolate, and not again in D1 when another
// isolate recorded a use within the period.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { noteKeyUse, KEY_USE_PERIOD_MS as PERIOD } from '../../src/auth/key-use';
import { createAccount } from '../../src/store/control/accounts';
import { createApiKey, touchCredential } from '../../src/store/control/credentials';
import { createOtpToken, OPEN_POLICY } from '../../src/store/control/otp-tokens';

const iso = (ms: number) => new Date(ms).toISOString();

async function newKey() {
  const account = await createAccount(env.DB, 'key use', { region: null, jurisdiction: null });
  return { kind: 'api_key' as const, id: (await createApiKey(env.DB, account.id, ['mail_api'], null)).apiKey.id };
}

async function newToken() {
  const account = await createAccount(env.DB, 'token use', { region: null, jurisdiction: null });
  return {
    kind: 'public_token' as const,
    id: (await createOtpToken(env.DB, account.id, { allowedIps: [], turnstile: null, policy: OPEN_POLICY })).otpToken
      .id,
  };
}

const lastUsedAt = async (credential: { kind: string; id: string }) =>
  (await env.DB.prepare(
    `SELECT last_used_at FROM ${credential.kind === 'api_key' ? 'api_keys' : 'otp_tokens'} WHERE id = ?`,
  )
    .bind(credential.id)
    .first<{ last_used_at: string }>())!.last_used_at;

describe('noteKeyUse', () => {
  it.each([
    ['a key', newKey],
    ['a public token', newToken],
  ])('%s: writes the first use, then nothing until the period has passed', async (_, made) => {
    const id = await made();
    const t0 = Date.parse('2026-11-20T10:00:00.000Z');
    await noteKeyUse(env.DB, id, t0);
    expect(await lastUsedAt(id)).toBe(iso(t0));
    expect(noteKeyUse(env.DB, id, t0 + 1)).toBeUndefined();
    expect(noteKeyUse(env.DB, id, t0 + PERIOD - 1)).toBeUndefined();
    expect(await lastUsedAt(id)).toBe(iso(t0));
    await noteKeyUse(env.DB, id, t0 + PERIOD);
    expect(await lastUsedAt(id)).toBe(iso(t0 + PERIOD));
  });

  it('each key has its own period', async () => {
    const [a, b] = [await newKey(), await newToken()];
    const t0 = Date.parse('2026-11-20T11:00:00.000Z');
    await noteKeyUse(env.DB, a, t0);
    await noteKeyUse(env.DB, b, t0 + 1);
    expect([await lastUsedAt(a), await lastUsedAt(b)]).toEqual([iso(t0), iso(t0 + 1)]);
  });
});

describe('touchCredential', () => {
  it('leaves a use recorded within the period (by another isolate) as it is', async () => {
    const key = await newKey();
    const t0 = Date.parse('2026-11-20T12:00:00.000Z');
    await touchCredential(env.DB, 'api_key', key.id, iso(t0), iso(t0 - PERIOD));
    await touchCredential(env.DB, 'api_key', key.id, iso(t0 + 60_000), iso(t0 + 60_000 - PERIOD));
    expect(await lastUsedAt(key)).toBe(iso(t0));
    await touchCredential(env.DB, 'api_key', key.id, iso(t0 + PERIOD + 1), iso(t0 + 1));
    expect(await lastUsedAt(key)).toBe(iso(t0 + PERIOD + 1));
  });
});
