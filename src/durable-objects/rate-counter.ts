import { DurableObject } from 'cloudflare:workers';

export type RateDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a slot frees up (the oldest counted hit leaves the window). */
  resetSeconds: number;
};

/**
 * One rate counter (a sliding-window log) per bucket and subject, e.g. `mail-key:key_abc`.
 * Each method runs its SQL synchronously with no await in between, so concurrent calls are atomic.
 * An alarm clears the log once it has gone quiet, so idle counters cost no storage.
 */
export class RateCounter extends DurableObject {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS hits (at INTEGER NOT NULL)');
    ctx.storage.sql.exec('CREATE INDEX IF NOT EXISTS hits_at ON hits(at)');
  }

  /** Counts one hit if the window has room; a refused hit is not counted. */
  hit(limit: number, windowSeconds: number): RateDecision {
    const now = Date.now();
    const sql = this.ctx.storage.sql;
    sql.exec('DELETE FROM hits WHERE at <= ?', now - windowSeconds * 1000);
    const used = sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM hits').one().n;
    const allowed = used < limit;
    if (allowed) sql.exec('INSERT INTO hits (at) VALUES (?)', now);
    // Once the newest hit has left the window the log is empty: clear the object then.
    void this.ctx.storage.setAlarm(now + windowSeconds * 1000 + 1000);
    return this.decide(limit, windowSeconds, now, allowed);
  }

  /** The current state, without counting. */
  peek(limit: number, windowSeconds: number): RateDecision {
    const now = Date.now();
    this.ctx.storage.sql.exec('DELETE FROM hits WHERE at <= ?', now - windowSeconds * 1000);
    const used = this.ctx.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM hits').one().n;
    return this.decide(limit, windowSeconds, now, used < limit);
  }

  private decide(limit: number, windowSeconds: number, now: number, allowed: boolean): RateDecision {
    const sql = this.ctx.storage.sql;
    const row = sql.exec<{ n: number; oldest: number | null }>('SELECT COUNT(*) AS n, MIN(at) AS oldest FROM hits').one();
    const resetMs = row.oldest === null ? 0 : row.oldest + windowSeconds * 1000 - now;
    return {
      allowed,
      limit,
      remaining: Math.max(limit - row.n, 0),
      resetSeconds: Math.max(Math.ceil(resetMs / 1000), allowed ? 0 : 1),
    };
  }

  /** Fires a window after the newest hit: everything in the log has expired. */
  alarm(): void {
    this.ctx.storage.sql.exec('DELETE FROM hits');
  }
}
