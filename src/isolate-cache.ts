// Values read from D1 kept in the isolate for a few seconds, so that a hot path does not pay a D1 read
// each time (credentials, OTP branding, webhook subscriptions). A change drops the entries in the isolate
// that made it; other isolates drop theirs within the TTL, which use does not extend. A read that started
// before a change may be stale and is not kept.

/** How long an isolate keeps what it read. */
export const ISOLATE_CACHE_TTL_MS = 10_000;

type Options<V> = {
  ttlMs?: number;
  maxEntries?: number;
  /** Which values are kept (default: all); e.g. not an unknown token, so a new key works at once. */
  keep?: (value: V) => boolean;
};

export class IsolateCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  /** Bumped by every change: a read that started before one is not kept. */
  private changes = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly keep: (value: V) => boolean;

  constructor({ ttlMs = ISOLATE_CACHE_TTL_MS, maxEntries = 1_000, keep = () => true }: Options<V> = {}) {
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
    this.keep = keep;
  }

  /** The value of `key`, read with `read` (and kept) when it is not here or has expired. */
  async get(key: string, read: () => Promise<V>, now = Date.now()): Promise<V> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) return entry.value;
    const readAfter = this.changes;
    const value = await read();
    this.entries.delete(key);
    if (readAfter === this.changes && this.keep(value)) {
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

  /** After a change: this isolate reads every value that `matches` again on its next use. */
  forgetWhere(matches: (value: V) => boolean): void {
    this.changes++;
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}
