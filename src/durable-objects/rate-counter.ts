import { DurableObject } from 'cloudflare:workers';

export type RateDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a slot frees up (the oldest counted hit leaves the window). */
  resetSeconds: number;
};

/** Windows up to this long live in memory only: an object is evicted only after it has been idle
 * longer than this, by which time every hit in such a window has expired anyway. */
const MEMORY_ONLY_WINDOW_SECONDS = 60;
/** The longest window persisted (the OTP failure cap); the alarm forgets anything older. */
const MAX_PERSISTED_WINDOW_MS = 3600_000;

/**
 * Rate counters (sliding-window logs) of one subject, e.g. `mail-key:key_abc`, or every OTP limit of
 * one recipient (`otp-recipient:acc_x:ann@example.com`, logs `otp-send-recipient` and
 * `otp-fails-recipient`), so that a verify checks the object its send already woke up. Each method
 * runs synchronously with no await, so concurrent calls are atomic. Short windows are kept in memory
 * (no storage write on the hot path); longer ones (OTP limits of 10 minutes and an hour) are also
 * written to SQLite so that an eviction does not reset them, and an alarm clears them once they have
 * expired.
 */
export class RateCounter extends DurableObject {
  /** Hit times per log, oldest first; each log is loaded from SQLite on first use. */
  private readonly logs = new Map<string, number[]>();
  /** Logs with windows long enough to be written to SQLite (the alarm reloads only these). */
  private readonly persistedLogs = new Set<string>();
  private tableReady = false;

  /** The table is created on the first persisted hit, so memory-only counters never touch storage. */
  private hasTable(create: boolean): boolean {
    if (!this.tableReady) {
      const sql = this.ctx.storage.sql;
      this.tableReady = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'log_hits'").toArray().length > 0;
      if (!this.tableReady && create) {
        sql.exec('CREATE TABLE log_hits (log TEXT NOT NULL, at INTEGER NOT NULL)');
        sql.exec('CREATE INDEX log_hits_by_log ON log_hits (log, at)');
        this.tableReady = true;
      }
    }
    return this.tableReady;
  }

  private hitsOf(log: string, windowSeconds: number, now: number): number[] {
    const persisted = windowSeconds > MEMORY_ONLY_WINDOW_SECONDS;
    if (persisted) this.persistedLogs.add(log);
    let hits = this.logs.get(log);
    if (!hits) {
      hits =
        persisted && this.hasTable(false)
          ? this.ctx.storage.sql
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
      if (persisted && this.hasTable(false)) this.ctx.storage.sql.exec('DELETE FROM log_hits WHERE log = ? AND at <= ?', log, cutoff);
    }
    return hits;
  }

  /** Counts one hit in `log` if its window has room; a refused hit is not counted. */
  hit(limit: number, windowSeconds: number, log = 'hits'): RateDecision {
    const now = Date.now();
    const hits = this.hitsOf(log, windowSeconds, now);
    const allowed = hits.length < limit;
    if (allowed) {
      hits.push(now);
      if (windowSeconds > MEMORY_ONLY_WINDOW_SECONDS) {
        this.hasTable(true);
        this.ctx.storage.sql.exec('INSERT INTO log_hits (log, at) VALUES (?, ?)', log, now);
        // The first hit of a quiet period schedules the clean-up; the alarm reschedules itself.
        if (hits.length === 1) void this.ctx.storage.setAlarm(now + MAX_PERSISTED_WINDOW_MS + 1000);
      }
    }
    return this.decide(hits, limit, windowSeconds, now, allowed);
  }

  /** The current state of `log`, without counting. */
  peek(limit: number, windowSeconds: number, log = 'hits'): RateDecision {
    const now = Date.now();
    const hits = this.hitsOf(log, windowSeconds, now);
    return this.decide(hits, limit, windowSeconds, now, hits.length < limit);
  }

  private decide(hits: number[], limit: number, windowSeconds: number, now: number, allowed: boolean): RateDecision {
    const resetMs = hits.length === 0 ? 0 : hits[0]! + windowSeconds * 1000 - now;
    return {
      allowed,
      limit,
      remaining: Math.max(limit - hits.length, 0),
      resetSeconds: Math.max(Math.ceil(resetMs / 1000), allowed ? 0 : 1),
    };
  }

  /** Forgets persisted hits older than any window; comes back while some are left. */
  async alarm(): Promise<void> {
    // An object from before named logs keeps a `hits` table that nothing reads any more.
    if (!this.hasTable(false)) return this.ctx.storage.deleteAll();
    const sql = this.ctx.storage.sql;
    sql.exec('DELETE FROM log_hits WHERE at <= ?', Date.now() - MAX_PERSISTED_WINDOW_MS);
    for (const log of this.persistedLogs) this.logs.delete(log); // reloaded from SQLite on next use
    const oldest = sql.exec<{ at: number | null }>('SELECT MIN(at) AS at FROM log_hits').one().at;
    if (oldest !== null) await this.ctx.storage.setAlarm(oldest + MAX_PERSISTED_WINDOW_MS + 1000);
  }
}
