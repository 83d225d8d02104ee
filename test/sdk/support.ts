// The SDK against the Worker itself, inside the Workers runtime: its `fetch` option is the Worker's own handler, and
// a fault-injecting fetch wraps it (a lost answer after the server acted, a 5xx or a 429 before it did).
import { exports } from 'cloudflare:workers';

export const BASE_URL = 'http://postcode.test';

/** The Worker's handler as a `fetch`. */
export const workerFetch: typeof fetch = (input, init) => exports.default.fetch(new Request(input, init));

export type Fault = 'lost-answer' | 'server-error' | { retryAfter: number };

/**
 * A fetch that fails the first calls as `faults` say, then behaves: 'lost-answer' lets the Worker act and throws
 * instead of answering; 'server-error' answers 503 without reaching it; `{ retryAfter }` answers 429. `calls` lists
 * each attempt's method, path and Idempotency-Key.
 */
export function faultyFetch(faults: Fault[]) {
  const calls: { method: string; path: string; idempotencyKey: string | null }[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    calls.push({
      method: request.method,
      path: new URL(request.url).pathname,
      idempotencyKey: request.headers.get('Idempotency-Key'),
    });
    const fault = faults.shift();
    if (fault === 'server-error') return Response.json({ success: false }, { status: 503 });
    if (typeof fault === 'object') {
      const error = { code: 'RATE_LIMITED', message: 'slow down', requestId: 'req_fault' };
      return Response.json(
        { success: false, error },
        { status: 429, headers: { 'Retry-After': String(fault.retryAfter) } },
      );
    }
    const res = await exports.default.fetch(request);
    if (fault === 'lost-answer') {
      await res.arrayBuffer();
      throw new TypeError('Network connection lost');
    }
    return res;
  };
  return { fetch, calls };
}
