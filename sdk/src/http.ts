// One request to postcode, with the retries that cannot send twice: a send carries one Idempotency-Key across its
// retries; a 429 waits out Retry-After (the request was refused, so nothing happened); 5xx and network failures are
// retried with jittered backoff only when repeating is safe (GET, or a send with its key). Never throws for an HTTP
// error: every call resolves to { data, error, headers }.
import type { ErrorCode } from './types.js';

/** What went wrong: the API's error (its code and request id), or what kept the request from an answer. */
export type PostcodeError = {
  code: ErrorCode | 'NETWORK_ERROR' | 'ABORTED' | 'INVALID_RESPONSE';
  message: string;
  /** The HTTP status; null when no answer came. */
  status: number | null;
  /** The answer's X-Request-Id: quote it when asking about the request. */
  requestId: string | null;
  /** With a 429 (or a lock): seconds until a retry may succeed. */
  retryAfterSeconds?: number;
  details?: { path: string; message: string }[];
};

export type Result<T> =
  | { data: T; error: null; headers: Headers }
  | { data: null; error: PostcodeError; headers: Headers | null };

export type ClientOptions = {
  /** Where postcode runs, e.g. `https://postcode.example.com` or `http://127.0.0.1:8787` under `npm start`. */
  baseUrl: string;
  /** Another fetch: a test's, or a service binding's `fetch` (defaults to the global one). */
  fetch?: typeof fetch;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** A 429 whose Retry-After is longer than this many seconds comes back as the error instead (default 10). */
  maxRetryAfterSeconds?: number;
  /** How long one attempt may take, in milliseconds (default 30,000). */
  timeoutMs?: number;
};

export type RequestOptions = {
  /** The Idempotency-Key of a send (generated when not given), the same on every retry. */
  idempotencyKey?: string;
  signal?: AbortSignal;
};

type Call = {
  query?: Record<string, unknown>;
  body?: unknown;
  /** A send: it gets an Idempotency-Key, and with it may be retried after a 5xx or a lost answer. */
  send?: boolean;
  /** Extra headers (the analytics secret of a history read). */
  headers?: Record<string, string>;
} & RequestOptions;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Full jitter: anywhere up to 0.5 s × 2^attempt, at most 8 s. */
const backoffMs = (attempt: number) => Math.random() * Math.min(500 * 2 ** attempt, 8_000);

function queryString(query: Record<string, unknown> | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      params.append(name, one instanceof Date ? one.toISOString() : String(one));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

const failure = (code: PostcodeError['code'], message: string, headers: Headers | null = null): Result<never> => ({
  data: null,
  error: { code, message, status: null, requestId: null },
  headers,
});

/** The error of a non-2xx answer, from the API's envelope when it has one. */
function answerError(res: Response, body: unknown): PostcodeError {
  const error = (body as { error?: Partial<PostcodeError> } | null)?.error;
  const retryAfter = Number(res.headers.get('Retry-After'));
  return {
    code: (error?.code ?? 'INVALID_RESPONSE') as PostcodeError['code'],
    message: error?.message ?? `HTTP ${res.status}`,
    status: res.status,
    requestId: res.headers.get('X-Request-Id') ?? (error as { requestId?: string } | undefined)?.requestId ?? null,
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
    ...(error?.details ? { details: error.details } : {}),
  };
}

/** The requests of one credential to one postcode. */
export class Transport {
  readonly #token: string;
  readonly #baseUrl: string;
  readonly #fetch: typeof fetch;
  readonly #maxRetries: number;
  readonly #maxRetryAfter: number;
  readonly #timeoutMs: number;

  constructor(token: string, options: ClientOptions) {
    if (!token) throw new TypeError('postcode: a key or token is required');
    if (!options?.baseUrl) throw new TypeError('postcode: baseUrl is required (where your postcode runs)');
    this.#token = token;
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    // Called unbound: a page's `window.fetch`, passed as the option, throws "Illegal invocation" on another `this`.
    const given = options.fetch;
    this.#fetch = (...args) => (given ?? globalThis.fetch)(...args);
    this.#maxRetries = options.maxRetries ?? 2;
    this.#maxRetryAfter = options.maxRetryAfterSeconds ?? 10;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  async request<T>(method: string, path: string, call: Call = {}): Promise<Result<T>> {
    const url = this.#baseUrl + path + queryString(call.query);
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#token}`, ...call.headers };
    if (call.body !== undefined) headers['Content-Type'] = 'application/json';
    if (call.send) headers['Idempotency-Key'] = call.idempotencyKey ?? crypto.randomUUID();
    // Repeating is safe for a read, and for a send whose key makes the server answer the first outcome again.
    const repeatable = method === 'GET' || call.send === true;
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.#maxRetries;
      const timeout = AbortSignal.timeout(this.#timeoutMs);
      const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
      let res: Response;
      try {
        res = await this.#fetch(url, { method, headers, body, signal });
      } catch (error) {
        if (call.signal?.aborted) return failure('ABORTED', 'the request was aborted');
        if (repeatable && !last) {
          await sleep(backoffMs(attempt), call.signal);
          continue;
        }
        return failure('NETWORK_ERROR', error instanceof Error ? error.message : String(error));
      }
      const text = await res.text().catch(() => '');
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        if (res.ok) return failure('INVALID_RESPONSE', `HTTP ${res.status}: not JSON`, res.headers);
      }
      if (res.ok) {
        const envelope = parsed as { success?: boolean; data?: T } | null;
        const data = envelope && envelope.success === true && 'data' in envelope ? envelope.data : parsed;
        return { data: data as T, error: null, headers: res.headers };
      }
      const error = answerError(res, parsed);
      if (!last && res.status === 429 && (error.retryAfterSeconds ?? 1) <= this.#maxRetryAfter) {
        await sleep((error.retryAfterSeconds ?? 1) * 1000, call.signal);
        continue;
      }
      if (!last && res.status >= 500 && repeatable) {
        await sleep(backoffMs(attempt), call.signal);
        continue;
      }
      return { data: null, error, headers: res.headers };
    }
  }
}
