// The isolate's credential cache: bounded age, no refresh by use, unknown tokens never kept, and a
// revocation drops entries (also one whose lookup was in flight).
import { describe, expect, it } from 'vitest';
import type { Credential } from '../../src/auth/credential';
import { credentialByHash, forgetCredential } from '../../src/auth/credential-cache';
import { ISOLATE_CACHE_TTL_MS as TTL } from '../../src/isolate-cache';

const key = (id: string): Credential => ({
  kind: 'api_key',
  id,
  accountId: 'acc_cache',
  scopes: ['mail_api'],
  mode: 'live',
});

/** Resolves `tokenHash` through the cache at `now`; says whether the lookup (D1) ran. */
async function resolve(tokenHash: string, credential: Credential | null, now: number) {
  let lookedUp = false;
  const found = await credentialByHash(
    tokenHash,
    async () => {
      lookedUp = true;
      return credential;
    },
    now,
  );
  return { found, lookedUp };
}

describe('credential cache', () => {
  it('answers until the TTL has passed, then looks up again', async () => {
    const t0 = 1_000_000;
    expect((await resolve('hash-ttl', key('key_ttl'), t0)).lookedUp).toBe(true);
    const hit = await resolve('hash-ttl', key('other'), t0 + TTL - 1);
    expect(hit).toEqual({ found: key('key_ttl'), lookedUp: false });
    expect((await resolve('hash-ttl', key('key_ttl'), t0 + TTL)).lookedUp).toBe(true);
  });

  it('a hit does not extend the entry (a key revoked elsewhere is refused within the TTL)', async () => {
    const t0 = 2_000_000;
    await resolve('hash-hit', key('key_hit'), t0);
    for (let t = t0; t < t0 + TTL; t += 1_000)
      expect((await resolve('hash-hit', key('key_hit'), t)).lookedUp).toBe(false);
    expect((await resolve('hash-hit', null, t0 + TTL)).found).toBeNull();
  });

  it('an unknown token is never kept: a key created a moment later works at once', async () => {
    const now = Date.now();
    expect((await resolve('hash-new', null, now)).found).toBeNull();
    expect(await resolve('hash-new', key('key_new'), now)).toEqual({ found: key('key_new'), lookedUp: true });
  });

  it('forgetCredential drops every entry of that credential id and nothing else', async () => {
    const now = Date.now();
    await resolve('hash-a', key('key_gone'), now);
    await resolve('hash-b', key('key_gone'), now);
    await resolve('hash-c', key('key_kept'), now);
    forgetCredential('key_gone');
    expect(await resolve('hash-a', null, now)).toEqual({ found: null, lookedUp: true });
    expect(await resolve('hash-b', null, now)).toEqual({ found: null, lookedUp: true });
    expect(await resolve('hash-c', null, now)).toEqual({ found: key('key_kept'), lookedUp: false });
  });

  it('a lookup that overlapped a revocation in this isolate is not kept (it may have read the key before)', async () => {
    const now = Date.now();
    let release: (credential: Credential) => void = () => {};
    const slow = credentialByHash('hash-race', () => new Promise((r) => (release = r)), now);
    forgetCredential('key_revoked_meanwhile'); // the revocation lands while the D1 read is in flight
    release(key('key_revoked_meanwhile'));
    expect((await slow)?.id).toBe('key_revoked_meanwhile');
    expect(await resolve('hash-race', null, now)).toEqual({ found: null, lookedUp: true });
  });

  it('holds at most 1,000 entries, dropping the oldest first', async () => {
    const now = Date.now();
    for (let i = 0; i < 1_001; i++) await resolve(`hash-bound-${i}`, key(`key_bound_${i}`), now);
    expect((await resolve('hash-bound-0', null, now)).lookedUp).toBe(true);
    expect((await resolve('hash-bound-1', null, now)).lookedUp).toBe(false);
    expect((await resolve('hash-bound-1000', null, now)).lookedUp).toBe(false);
  });
});
