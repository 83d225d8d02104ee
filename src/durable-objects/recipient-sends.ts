import type { HitLogs, RateDecision, WindowRule } from './hit-logs';

/** The recipient's send limits (decisions.md): codes sent in 10 minutes, in a day, and the doubling wait. */
const SENDS = 'sends';
const SENDS_DAY = 'sends-day';
/** Sends since the recipient last verified a code (within the day): the doubling wait grows with them. */
const UNVERIFIED = 'unverified';
/** The longest window a recipient keeps: the day's sends (and the streak's). */
export const DAY_SECONDS = 86_400;

/**
 * The send limits of a recipient: the short window's, the day's, and the doubling wait (`backoffSeconds`; 0: none)
 * after the second unverified send.
 */
export type SendLimits = { window: WindowRule; day: WindowRule; backoffSeconds: number };
/** The streak's log counts every send; only the wait it implies refuses. */
const STREAK_RULE: WindowRule = { limit: Number.MAX_SAFE_INTEGER, windowSeconds: DAY_SECONDS };

/** What a recipient's sends are allowed, in its object's hit logs. Every method is synchronous (see HitLogs). */
export class RecipientSends {
  constructor(private readonly logs: HitLogs) {}

  /**
   * The doubling wait: once two sends in the day went unverified, the next may go `backoffSeconds` after the last,
   * the one after twice that, and so on (at most a day). A refusal while the wait runs; null when none.
   */
  private waiting(limits: SendLimits, now: number): RateDecision | null {
    if (limits.backoffSeconds === 0) return null;
    const streak = this.logs.recent(UNVERIFIED, DAY_SECONDS, now);
    if (streak.length < 2) return null;
    const waitSeconds = Math.min(limits.backoffSeconds * 2 ** (streak.length - 2), DAY_SECONDS);
    const dueAt = streak[streak.length - 1]! + waitSeconds * 1000;
    if (now >= dueAt) return null;
    const resetSeconds = Math.ceil((dueAt - now) / 1000);
    return { allowed: false, limit: limits.window.limit, remaining: 0, resetSeconds };
  }

  /**
   * Counts a send in both windows and the streak if each window has room and no wait runs; otherwise counts
   * nothing and answers the refusal that lasts longest. `pruneAt`: when the owner's alarm must prune the logs.
   */
  count(limits: SendLimits, now = Date.now()): { decision: RateDecision; pruneAt: number | null } {
    const windows: [string, WindowRule][] = [
      [SENDS, limits.window],
      [SENDS_DAY, limits.day],
    ];
    const refusals = [...windows.map(([log, rule]) => this.logs.peek(log, rule, now)), this.waiting(limits, now)];
    const longest = refusals.reduce<RateDecision | null>(
      (a, b) => (b && !b.allowed && (!a || b.resetSeconds > a.resetSeconds) ? b : a),
      null,
    );
    if (longest) return { decision: longest, pruneAt: null };
    if (limits.backoffSeconds > 0) windows.push([UNVERIFIED, STREAK_RULE]);
    const counted = windows.map(([log, rule]) => this.logs.hit(log, rule, now));
    const pruneAt = Math.min(...counted.map((c) => c.pruneAt ?? Number.POSITIVE_INFINITY));
    return { decision: counted[0]!.decision, pruneAt: Number.isFinite(pruneAt) ? pruneAt : null };
  }

  /** A code was verified: the wait starts again from nothing; the windows keep their counts. */
  verified(): void {
    this.logs.clear(UNVERIFIED);
  }
}
