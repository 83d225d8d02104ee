// The isolate cache behind credentials, OTP branding and webhook subscriptions: kept for its TTL, read
// again after it, never keeping a read that a change overtook, and bounded in size.
import { describe, expect, it } from 'vitest';
import { IsolateCache } from '../src/isolate-cache';

const counter = () => {
  let reads = 0;
  return { read: async () => ++reads, reads: () => reads };
};

describe('IsolateCache', () => {
  it('keeps a value for its TTL and reads it again after', async () => {
    const cache = new IsolateCache<number>({ ttlMs: 1_000 });
    const source = counter();
    expect(await cache.get('a', source.read, 0)).toBe(1);
    expect(await cache.get('a', source.read, 999)).toBe(1);
    expect(await cache.get('a', source.read, 1_000)).toBe(2);
    expect(source.reads()).toBe(2);
  });

  it('forget makes the next use read again', async () => {
    const cache = new IsolateCache<number>({ ttlMs: 1_000 });
    const source = counter();
    await cache.get('a', source.read, 0);
    cache.forget('a');
    expect(await cache.get('a', source.read, 1)).toBe(2);
  });

  it('a read that a change overtook is returned but not kept', async () => {
    const cache = new IsolateCache<string>({ ttlMs: 1_000 });
    let release: (value: string) => void = () => {};
    const slow = cache.get('a', () => new Promise<string>((resolve) => (release = resolve)), 0);
    cache.forget('a'); // the change lands while the read is under way
    release('stale');
    expect(await slow).toBe('stale');
    expect(await cache.get('a', async () => 'fresh', 1)).toBe('fresh');
  });

  it('holds at most maxEntries, dropping the oldest', async () => {
    const cache = new IsolateCache<string>({ ttlMs: 1_000, maxEntries: 2 });
    for (const key of ['a', 'b', 'c']) await cache.get(key, async () => `${key}1`, 0);
    expect(await cache.get('b', async () => 'b2', 1)).toBe('b1');
    expect(await cache.get('c', async () => 'c2', 1)).toBe('c1');
    expect(await cache.get('a', async () => 'a2', 1)).toBe('a2');
  });
});
