// What the SDK's end-to-end files share: an account of their own (the demo account's audit log is another test's),
// the local inbox by recipient, a webhook receiver on the loopback that keeps each delivery's raw body and
// headers, and a `fetch` that injects faults around the real service.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { expect, inject, vi } from 'vitest';
import { freePort } from './local-service';
import { succeeded } from './shared-service';

export const service = inject('e2e');

export type Account = { id: string; mailKey: string; serverKey: string; publicToken: string };

/** A fresh account (through the operator API) with a live mail key, a server OTP key and a public OTP token. */
export async function ownAccount(name: string): Promise<Account> {
  const admin = <T>(path: string, body: unknown) => succeeded<T>('POST', path, service.adminToken, body);
  const { id } = await admin<{ id: string }>('/admin/v1/accounts', { name });
  const mail = await admin<{ key: string }>(`/admin/v1/accounts/${id}/api-keys`, { scopes: ['mail_api'] });
  const otp = await admin<{ key: string }>(`/admin/v1/accounts/${id}/api-keys`, { scopes: ['server_otp'] });
  const token = await admin<{ token: string }>(`/admin/v1/accounts/${id}/otp-tokens`, {});
  return { id, mailKey: mail.key, serverKey: otp.key, publicToken: token.token };
}

type MaildevMail = { to: { address: string }[]; subject: string; text: string };

/** The mails maildev holds for this (unique) address, oldest first. */
export async function mailsTo(address: string): Promise<MaildevMail[]> {
  const mails = (await (await fetch(`${service.inboxUrl}/email`)).json()) as MaildevMail[];
  return mails.filter((m) => m.to.some((to) => to.address.toLowerCase() === address.toLowerCase()));
}

/** Waits until maildev holds `count` mails for the address (fails on fewer in time); how many it holds then. */
export async function waitForMails(address: string, count: number): Promise<number> {
  await expect.poll(async () => (await mailsTo(address)).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(count);
  return (await mailsTo(address)).length;
}

/** The code of the `n`-th mail (from 1) to the address: the line that is only digits. */
export async function nthCode(address: string, n: number): Promise<string> {
  await waitForMails(address, n);
  const text = (await mailsTo(address))[n - 1]!.text;
  const code = /^\s*(\d{4,10})\s*$/m.exec(text)?.[1];
  if (!code) throw new Error(`no code in mail ${n} to ${address}: ${JSON.stringify(text)}`);
  return code;
}

export type Delivery = { rawBody: string; headers: IncomingHttpHeaders; type: string; data: Record<string, unknown> };

export type Receiver = {
  url: string;
  deliveries: Delivery[];
  /** The first delivery (in arrival order, after `skip`) that `match` accepts, once it has come. */
  next(match: (d: Delivery) => boolean, skip?: number): Promise<Delivery>;
  close(): Promise<void>;
};

/** A webhook endpoint on a free loopback port (the e2e service sets WEBHOOK_ALLOW_INSECURE): answers 204 to all. */
export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const event = JSON.parse(rawBody) as { type: string; data: Record<string, unknown> };
      deliveries.push({ rawBody, headers: req.headers, type: event.type, data: event.data });
      res.writeHead(204).end();
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const find = (match: (d: Delivery) => boolean, skip: number) => deliveries.slice(skip).find(match);
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries,
    async next(match, skip = 0) {
      // vi.waitFor, not expect.poll: this also runs in hooks.
      return vi.waitFor(
        () => {
          const found = find(match, skip);
          if (!found) throw new Error(`no matching delivery among ${deliveries.length}`);
          return found;
        },
        { timeout: 20_000, interval: 100 },
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Fault = 'lost-answer' | 'server-error';
export type Attempt = { method: string; path: string; idempotencyKey: string | null; answer?: unknown };

/**
 * A `fetch` for the SDK's `fetch` option that fails the first attempts as `faults` say, then passes through:
 * 'lost-answer' lets the request reach the service, reads its whole answer, and throws instead of returning it (the
 * connection dropped after the server acted); 'server-error' answers 503 without reaching the service. `attempts`
 * records each attempt, with the JSON of an answer that was dropped.
 */
export function faultyFetch(faults: Fault[]) {
  const attempts: Attempt[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const attempt: Attempt = {
      method: request.method,
      path: new URL(request.url).pathname,
      idempotencyKey: request.headers.get('Idempotency-Key'),
    };
    attempts.push(attempt);
    const fault = faults.shift();
    if (fault === 'server-error') return Response.json({ success: false }, { status: 503 });
    const res = await fetch(request);
    if (fault === 'lost-answer') {
      attempt.answer = await res.json();
      throw new TypeError('fetch failed: the connection was reset');
    }
    return res;
  };
  return { fetch: wrapped, attempts };
}
