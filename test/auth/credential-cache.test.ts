// The isolate's credential cache: bounded age, no refresh by use, and revocation drops entries.
import { describe, expect, it } from 'vitest';
import {
  CACHE_TTL_MS,
  cachedCredential,
  forgetCredential,
  rememberCredential,
  revocationCount,
} from '../../src/auth/credential-cache';
import type { Credential } from '../../src/auth/credentials';

const key = (id: string): Credential => ({
  kind: 'api_key',
  id,
  accountId: 'acc_cache',
  scopes: ['mail_api'],
  mode: 'live',
});

describe('credential cache', () => {
  it('answers until the TTL has passed, then forgets', () => {
    const t0 = 1_000_000;
    rememberCredential('hash-ttl', key('key_ttl'), revocationCount(), t0);
    expect(cachedCredential('hash-ttl', t0 + CACHE_TTL_MS - 1)?.id).toBe('key_ttl');
    expect(cachedCredential('hash-ttl', t0 + CACHE_TTL_MS)).toBeUndefined();
    expect(cachedCredential('hash-ttl', t0)).toBeUndefined(); // gone, not merely stale
  });

  it('a hit does not extend the entry (a key revoked elsewhere is refused within the TTL)', () => {
    const t0 = 2_000_000;
    rememberCredential('hash-hit', key('key_hit'), revocationCount(), t0);
    for (let t = t0; t < t0 + CACHE_TTL_MS; t += 1_000) expect(cachedCredential('hash-hit', t)).toBeDefined();
    expect(cachedCredential('hash-hit', t0 + CACHE_TTL_MS)).toBeUndefined();
  });

  it('forgetCredential drops every entry of that credential id and nothing else', () => {
    const now = Date.now();
    rememberCredential('hash-a', key('key_gone'), revocationCount(), now);
    rememberCredential('hash-b', key('key_gone'), revocationCount(), now);
    rememberCredential('hash-c', key('key_kept'), revocationCount(), now);
    forgetCredential('key_gone');
    expect(cachedCredential('hash-a', now)).toBeUndefined();
    expect(cachedCredential('hash-b', now)).toBeUndefined();
    expect(cachedCredential('hash-c', now)?.id).toBe('key_kept');
  });

  it('a lookup that overlapped a revocation in this isolate is not kept (it may have read the key before)', () => {
    const now = Date.now();
    const readAfter = revocationCount();
    forgetCredential('key_revoked_meanwhile'); // the revocation lands while the D1 read is in flight
    rememberCredential('hash-race', key('key_revoked_meanwhile'), readAfter, now);
    expect(cachedCredential('hash-race', now)).toBeUndefined();
    rememberCredential('hash-race', key('key_revoked_meanwhile'), revocationCount(), now);
    expect(cachedCredential('hash-race', now)?.id).toBe('key_revoked_meanwhile');
  });

  it('holds at most 1,000 entries, dropping the oldest first', () => {
    const now = Date.now();
    for (let i = 0; i < 1_001; i++)
      rememberCredential(`hash-bound-${i}`, key(`key_bound_${i}`), revocationCount(), now);
    expect(cachedCredential('hash-bound-0', now)).toBeUndefined();
    expect(cachedCredential('hash-bound-1', now)?.id).toBe('key_bound_1');
    expect(cachedCredential('hash-bound-1000', now)?.id).toBe('key_bound_1000');
  });
});
