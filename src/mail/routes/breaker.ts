// A circuit breaker per delivery route, kept in the isolate: after 3 route failures in a row the route is
// skipped (open); 30 s later one attempt may try it again (half-open) and its result closes or reopens it.
// The breaker saves a first attempt the time of a route that is down; it never holds a retry that has nothing
// else to try: such a retry is itself the probe (src/mail/routes/send.ts), and its result counts here the same.
// Each isolate learns on its own: the state is a hint to save time, never a fact (D1 and the queue still
// decide what is sent), so nothing global is needed and a fresh isolate starts with every route closed.

export const OPEN_AFTER_FAILURES = 3;
export const HALF_OPEN_AFTER_MS = 30_000;

export type BreakerState = 'closed' | 'open' | 'half_open';

/** `probeAt`: when the half-open probe under way started (null: none). */
type Entry = { failures: number; openedAt: number | null; probeAt: number | null };

const routes = new Map<string, Entry>();

const entryOf = (name: string): Entry => {
  let entry = routes.get(name);
  if (!entry) {
    entry = { failures: 0, openedAt: null, probeAt: null };
    routes.set(name, entry);
  }
  return entry;
};

/** The state of a route now (open turns half-open once its time has come). */
export function breakerState(name: string, now = Date.now()): BreakerState {
  const entry = routes.get(name);
  if (!entry || entry.openedAt === null) return 'closed';
  return now - entry.openedAt >= HALF_OPEN_AFTER_MS ? 'half_open' : 'open';
}

/**
 * Whether an attempt may use the route now: closed, or half-open with no probe under way (this attempt
 * becomes the probe; one that never reported back stops counting as under way after the same 30 s).
 */
export function mayUse(name: string, now = Date.now()): boolean {
  const state = breakerState(name, now);
  if (state === 'closed') return true;
  if (state === 'open') return false;
  const entry = entryOf(name);
  if (entry.probeAt !== null && now - entry.probeAt < HALF_OPEN_AFTER_MS) return false;
  entry.probeAt = now;
  return true;
}

/** The route answered (whatever it said about the message): it works. */
export function routeSucceeded(name: string): void {
  routes.delete(name);
}

/** The route itself failed (refused, reset, timeout, 421, TLS): one more in a row; a failed probe reopens. */
export function routeFailed(name: string, now = Date.now()): void {
  const entry = entryOf(name);
  entry.failures += 1;
  entry.probeAt = null;
  if (entry.openedAt !== null || entry.failures >= OPEN_AFTER_FAILURES) entry.openedAt = now;
}

/** Every route closed again (tests, and a configuration change seen by the isolate). */
export function resetBreakers(): void {
  routes.clear();
}
