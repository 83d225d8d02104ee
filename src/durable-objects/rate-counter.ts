import { DurableObject } from 'cloudflare:workers';
import { AlarmClock, HitLogs, type RateDecision } from './hit-logs';

/**
 * The rate counters of one subject, e.g. `mail-key:key_abc` or `mail-ip:203.0.113.9` (sliding-window
 * logs, see HitLogs). Each method runs synchronously up to its decision, so concurrent calls are
 * atomic. The per-recipient OTP limits are not here: they live with the sessions in OtpRecipient.
 */
export class RateCounter extends DurableObject {
  private readonly logs = new HitLogs(this.ctx.storage.sql);
  private readonly alarmClock = new AlarmClock(this.ctx.storage);

  /** Counts `count` hits in `log` if its window has room for all; refused hits are not counted. */
  async hit(limit: number, windowSeconds: number, log = 'hits', count = 1): Promise<RateDecision> {
    const { decision, pruneAt } = this.logs.hit(log, { limit, windowSeconds }, Date.now(), count);
    if (pruneAt !== null) await this.alarmClock.noLaterThan(pruneAt);
    return decision;
  }

  /** The current state of `log`, without counting. */
  peek(limit: number, windowSeconds: number, log = 'hits'): RateDecision {
    return this.logs.peek(log, { limit, windowSeconds });
  }

  /** Forgets persisted hits older than any window; comes back while some are left. */
  async alarm(): Promise<void> {
    this.alarmClock.ringing();
    const next = this.logs.prune();
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }
}
