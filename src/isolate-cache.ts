// Values read from D1 kept in the isolate for a few seconds, so that a hot path does not pay a D1 read
// each time. A change drops the entry in the isolate that made it; other isolates drop theirs within
// `ttlMs`. A read that started before a change may be stale and is not kept.

/** How long an isolate keeps what it read (the credential cache's TTL too). */
export const ISOLATE_CACHE_TTL_MS = 10_000;

export class IsolateCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  /** Bumped by every `forget`: a read that started before one is not kept. */
  private changes = 0;

  constructor(
    private readonly ttlMs = ISOLATE_CACHE_TTL_MS,
    private readonly maxEntries = 1_000,
  ) {}

  /** The value of `key`, read with `read` (and kept) when it is not here or has expired. */
  async get(key: string, read: () => Promise<V>, now = Date.now()): Promise<V> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) return entry.value;
    const readAfter = this.changes;
    const value = await read();
    if (readAfter === this.changes) {
      this.entries.delete(key);
      // Map keeps insertion order: the first entry is the oldest.
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value, expiresAt: now + this.ttlMs });
    }
    return value;
  }

  /** After a change: this isolate reads `key` again on its next use. */
  forget(key: string): void {
    this.changes++;
    this.entries.delete(key);
  }
}
