// Sliding-window hit logs, shared by the Durable Objects that enforce rate limits (RateCounter for
// keys, credentials and addresses; OtpRecipient for the per-recipient OTP limits).

export type RateDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a slot frees up (the oldest counted hit leaves the window). */
  resetSeconds: number;
};

/** What an object's stores need of its SQL: statements only. */
export type SqlExec = Pick<SqlStorage, 'exec'>;

/** A limit: at most `limit` hits in any `windowSeconds`. */
export type WindowRule = { limit: number; windowSeconds: number };

/** Windows up to this long live in memory only: an object is evicted only after it has been idle
 * longer than this, by which time every hit in such a window has expired anyway. */
const MEMORY_ONLY_WINDOW_SECONDS = 60;
const isPersisted = (windowSeconds: number) => windowSeconds > MEMORY_ONLY_WINDOW_SECONDS;
/** The longest window an owner persists unless it says otherwise; `prune` forgets anything older. */
const DEFAULT_MAX_WINDOW_SECONDS = 3600;

/**
 * The table of persisted hits, for an owner that creates it together with its own tables. Without an
 * index: such an owner (a recipient) keeps a handful of hits, and each index is one more page and schema
 * row written when the object is made.
 */
export const HIT_LOG_TABLE = 'CREATE TABLE IF NOT EXISTS log_hits (log TEXT NOT NULL, at INTEGER NOT NULL);';
/** The table with an index by log, created on the first persisted hit of an owner with many hits (a counter). */
const HIT_LOG_SCHEMA = `${HIT_LOG_TABLE}
  CREATE INDEX IF NOT EXISTS log_hits_by_log ON log_hits (log, at);`;

/**
 * The named logs of one object. Every method is synchronous, so a caller that does not await
 * between checking and counting is atomic. Short windows are kept in memory (no storage write on
 * the hot path); longer ones are also written to SQLite so that an eviction does not reset them.
 * The owner schedules `prune` through its alarm, at the time `hit` returns as `pruneAt`.
 */
export class HitLogs {
  /** Hit times per log, oldest first; each log is loaded from SQLite on first use. */
  private readonly logs = new Map<string, number[]>();
  /** Logs with windows long enough to be written to SQLite (`prune` reloads only these). */
  private readonly persistedLogs = new Set<string>();
  private readonly maxWindowMs: number;

  /**
   * `tableReady`: the owner created `log_hits` with its own schema (HIT_LOG_TABLE), so nothing is checked.
   * `maxWindowSeconds`: the owner's longest window; hits older than it are pruned.
   */
  constructor(
    private readonly sql: SqlExec,
    private tableReady = false,
    maxWindowSeconds = DEFAULT_MAX_WINDOW_SECONDS,
  ) {
    this.maxWindowMs = maxWindowSeconds * 1000;
  }

  /** Whether anything was ever persisted here (else the table is created on the first persisted hit). */
  hasTable(create = false): boolean {
    if (!this.tableReady) {
      this.tableReady =
        this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'log_hits'").toArray().length > 0;
      if (!this.tableReady && create) {
        this.sql.exec(HIT_LOG_SCHEMA);
        this.tableReady = true;
      }
    }
    return this.tableReady;
  }

  private hitsOf(log: string, windowSeconds: number, now: number): number[] {
    const persisted = isPersisted(windowSeconds);
    if (persisted) this.persistedLogs.add(log);
    let hits = this.logs.get(log);
    if (!hits) {
      hits =
        persisted && this.hasTable()
          ? this.sql
              .exec<{ at: number }>('SELECT at FROM log_hits WHERE log = ? ORDER BY at', log)
              .toArray()
              .map((r) => r.at)
          : [];
      this.logs.set(log, hits);
    }
    const cutoff = now - windowSeconds * 1000;
    let expired = 0;
    while (expired < hits.length && hits[expired]! <= cutoff) expired++;
    if (expired > 0) {
      hits.splice(0, expired);
      if (persisted && this.hasTable()) this.sql.exec('DELETE FROM log_hits WHERE log = ? AND at <= ?', log, cutoff);
    }
    return hits;
  }

  /**
   * Counts `count` hits in `log` if its window has room for all of them; refused hits are not counted.
   * `pruneAt` is set when the hits were persisted: the owner's alarm must run `prune` no later than that.
   */
  hit(log: string, rule: WindowRule, now = Date.now(), count = 1): { decision: RateDecision; pruneAt: number | null } {
    const hits = this.hitsOf(log, rule.windowSeconds, now);
    const allowed = hits.length + count <= rule.limit;
    let pruneAt: number | null = null;
    if (allowed) {
      for (let i = 0; i < count; i++) hits.push(now);
      if (isPersisted(rule.windowSeconds)) {
        this.hasTable(true);
        for (let i = 0; i < count; i++) this.sql.exec('INSERT INTO log_hits (log, at) VALUES (?, ?)', log, now);
        pruneAt = now + this.maxWindowMs + 1000;
      }
    }
    return { decision: decide(hits, rule, now, allowed), pruneAt };
  }

  /** The current state of `log`, without counting. */
  peek(log: string, rule: WindowRule, now = Date.now()): RateDecision {
    const hits = this.hitsOf(log, rule.windowSeconds, now);
    return decide(hits, rule, now, hits.length < rule.limit);
  }

  /** The hits of `log` within `windowSeconds`, oldest first, without counting. */
  recent(log: string, windowSeconds: number, now = Date.now()): readonly number[] {
    return this.hitsOf(log, windowSeconds, now);
  }

  /** Forgets every hit of `log`. */
  clear(log: string): void {
    this.logs.set(log, []);
    if (this.hasTable()) this.sql.exec('DELETE FROM log_hits WHERE log = ?', log);
  }

  /** Forgets persisted hits older than any window. Returns when to prune again (null: nothing left). */
  prune(now = Date.now()): number | null {
    if (!this.hasTable()) return null;
    this.sql.exec('DELETE FROM log_hits WHERE at <= ?', now - this.maxWindowMs);
    for (const log of this.persistedLogs) this.logs.delete(log); // reloaded from SQLite on next use
    const oldest = this.sql.exec<{ at: number | null }>('SELECT MIN(at) AS at FROM log_hits').one().at;
    return oldest === null ? null : oldest + this.maxWindowMs + 1000;
  }
}

function decide(hits: number[], rule: WindowRule, now: number, allowed: boolean): RateDecision {
  const resetMs = hits.length === 0 ? 0 : hits[0]! + rule.windowSeconds * 1000 - now;
  return {
    allowed,
    limit: rule.limit,
    remaining: Math.max(rule.limit - hits.length, 0),
    resetSeconds: Math.max(Math.ceil(resetMs / 1000), allowed ? 0 : 1),
  };
}

/**
 * An object's one alarm (its clean-ups share it), with its time remembered: only the object sets it, so a
 * warm object neither reads nor writes storage when the alarm is already due early enough. A fact owed to
 * D1 brings it forward (`bound`) and, once written, lets it go back (`unbound`) to what the clean-ups need.
 */
export class AlarmClock {
  /** undefined: not known (never read, or the alarm has run since). */
  private at: number | null | undefined;
  /**
   * While a fact holds the alarm early: when the clean-ups need it (null: never). undefined: no fact holds
   * it, or this instance does not know (it was made after the fact, or the alarm has run since).
   */
  private cleanupsAt: number | null | undefined;

  constructor(private readonly storage: DurableObjectStorage) {}

  private async known(): Promise<number | null> {
    if (this.at === undefined) {
      const stored = await this.storage.getAlarm();
      // A concurrent call may have set it while this one read.
      if (this.at === undefined) this.at = stored;
    }
    return this.at;
  }

  /** Sets the alarm to `at` unless one is already due earlier. */
  private async earlier(at: number): Promise<void> {
    const current = await this.known();
    if (current !== null && current <= at) return;
    this.at = at; // before the await, so a concurrent call sees it
    await this.storage.setAlarm(at);
  }

  /** A clean-up is due at `at`: sets the alarm to it unless one is already due earlier. */
  async noLaterThan(at: number): Promise<void> {
    if (this.cleanupsAt !== undefined) this.cleanupsAt = Math.min(this.cleanupsAt ?? Number.POSITIVE_INFINITY, at);
    await this.earlier(at);
  }

  /** A fact must reach D1 by `at`: brings the alarm forward, remembering when the clean-ups need it. */
  async bound(at: number): Promise<void> {
    const current = await this.known();
    if (this.cleanupsAt === undefined) this.cleanupsAt = current;
    await this.earlier(at);
  }

  /**
   * No fact is owed any more: the alarm goes back to the clean-ups' time, so the object is not woken to find
   * nothing to do. When that time is not known here, the alarm stays as it is (its run sets it right).
   */
  async unbound(): Promise<void> {
    const at = this.cleanupsAt;
    if (at === undefined) return;
    this.cleanupsAt = undefined;
    if (at === this.at) return;
    this.at = at;
    await (at === null ? this.storage.deleteAlarm() : this.storage.setAlarm(at));
  }

  /** The alarm is running: what it leaves set is read again when next needed. */
  ringing(): void {
    this.at = undefined;
    this.cleanupsAt = undefined;
  }
}
