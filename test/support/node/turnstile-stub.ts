// A Cloudflare Turnstile Siteverify stub, like the one `npm start` runs. It honours Cloudflare's documented test
// secret keys, as Siteverify itself does:
//   1x0000000000000000000000000000000AA   always passes
//   2x0000000000000000000000000000000AA   always fails (invalid-input-response)
//   3x0000000000000000000000000000000AA   the token was already spent (timeout-or-duplicate)
// Any other secret is refused (invalid-input-secret). For the tests' faults, by the answer token: one that starts
// with `siteverify-down` gets an HTTP 500 every time; `siteverify-flaky` an HTTP 500 on the first call of each
// idempotency key; `siteverify-garbage` a 200 that is not JSON (an error page of a proxy on the way).
//   POST /siteverify   JSON or form: secret, response, remoteip?, idempotency_key?
//   GET  /calls        every request received, oldest first
import { createServer, type Server } from 'node:http';
import { type HttpFixture, listenOnLoopback } from './http-fixture';

export const TURNSTILE_TEST_SECRETS = {
  passes: '1x0000000000000000000000000000000AA',
  fails: '2x0000000000000000000000000000000AA',
  spent: '3x0000000000000000000000000000000AA',
} as const;
/** The site key whose widget always passes, shown with the passing secret. */
export const TURNSTILE_TEST_SITE_KEY = '1x00000000000000000000AA';

const ANSWERS: Record<string, string[]> = {
  [TURNSTILE_TEST_SECRETS.passes]: [],
  [TURNSTILE_TEST_SECRETS.fails]: ['invalid-input-response'],
  [TURNSTILE_TEST_SECRETS.spent]: ['timeout-or-duplicate'],
};

export type SiteverifyCall = { secret?: string; response?: string; remoteip?: string; idempotency_key?: string };

function parse(contentType: string | undefined, text: string): SiteverifyCall {
  if (contentType?.includes('application/json')) return JSON.parse(text) as SiteverifyCall;
  return Object.fromEntries(new URLSearchParams(text)) as SiteverifyCall;
}

/** Error codes for a call (none: it passes). */
function errorCodes(call: SiteverifyCall): string[] {
  if (!call.secret) return ['missing-input-secret'];
  if (!call.response) return ['missing-input-response'];
  return ANSWERS[call.secret] ?? ['invalid-input-secret'];
}

export async function startTurnstileStub(): Promise<HttpFixture> {
  const calls: SiteverifyCall[] = [];
  const failedOnce = new Set<string>();
  const server: Server = createServer(async (req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && req.url === '/calls') return json(200, calls);
    if (req.method !== 'POST' || req.url !== '/siteverify') return res.writeHead(404).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let call: SiteverifyCall;
    try {
      call = parse(req.headers['content-type'], Buffer.concat(chunks).toString('utf8'));
    } catch {
      return json(400, { success: false, 'error-codes': ['bad-request'] });
    }
    calls.push(call);
    if (call.response?.startsWith('siteverify-down')) return res.writeHead(500).end();
    if (call.response?.startsWith('siteverify-garbage')) {
      return res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>Bad gateway</html>');
    }
    if (call.response?.startsWith('siteverify-flaky') && !failedOnce.has(call.idempotency_key ?? '')) {
      failedOnce.add(call.idempotency_key ?? '');
      return res.writeHead(500).end();
    }
    const codes = errorCodes(call);
    return json(200, {
      success: codes.length === 0,
      'error-codes': codes,
      ...(codes.length === 0 ? { challenge_ts: new Date().toISOString(), hostname: 'localhost' } : {}),
    });
  });
  return listenOnLoopback(server);
}
