// An API key's last use: written at most once per period per isolate, and not again in D1 when another
// isolate recorded a use within the period.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { noteKeyUse, KEY_USE_PERIOD_MS as PERIOD } from '../../src/auth/key-use';
import { createAccount } from '../../src/db/accounts';
import { createApiKey, touchApiKey } from '../../src/db/credentials';

const iso = (ms: number) => new Date(ms).toISOString();

async function newKeyId() {
  const account = await createAccount(env.DB, 'key use');
  return (await createApiKey(env.DB, account.id, ['mail_api'], null)).apiKey.id;
}

const lastUsedAt = async (id: string) =>
  (await env.DB.prepare('SELECT last_used_at FROM api_keys WHERE id = ?').bind(id).first<{ last_used_at: string }>())!
    .last_used_at;

describe('noteKeyUse', () => {
  it('writes the first use, then nothing until the period has passed', async () => {
    const id = await newKeyId();
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
    const [a, b] = [await newKeyId(), await newKeyId()];
    const t0 = Date.parse('2026-11-20T11:00:00.000Z');
    await noteKeyUse(env.DB, a, t0);
    await noteKeyUse(env.DB, b, t0 + 1);
    expect([await lastUsedAt(a), await lastUsedAt(b)]).toEqual([iso(t0), iso(t0 + 1)]);
  });
});

describe('touchApiKey', () => {
  it('leaves a use recorded within the period (by another isolate) as it is', async () => {
    const id = await newKeyId();
    const t0 = Date.parse('2026-11-20T12:00:00.000Z');
    await touchApiKey(env.DB, id, iso(t0), iso(t0 - PERIOD));
    await touchApiKey(env.DB, id, iso(t0 + 60_000), iso(t0 + 60_000 - PERIOD));
    expect(await lastUsedAt(id)).toBe(iso(t0));
    await touchApiKey(env.DB, id, iso(t0 + PERIOD + 1), iso(t0 + 1));
    expect(await lastUsedAt(id)).toBe(iso(t0 + PERIOD + 1));
  });
});
