// Test helpers: requests through the real worker (D1, queues, SMTP), accounts with fresh keys, the inbox.
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { expect } from 'vitest';
import { buildApp } from '../../src/app';
import type { Account, ApiKey, EmailList, EmailLogEntry, OtpToken, Sender } from './responses';

export const ADMIN_TOKEN = 'test-admin-token';

/** The `error` of an error answer (`errorBody` in src/errors.ts). */
export type ErrorInfo = {
  code: string;
  message: string;
  details?: { path: string; message: string }[];
  resetAt?: string;
  retryAfterSeconds?: number;
};

/**
 * The API's JSON envelope, `D` being the `data` of a success. At run time an answer is either
 * `{ success: true, data }` (2xx) or `{ success: false, error }`: `data` is only meaningful on a 2xx answer and
 * `error` only on an error answer. Both are typed as present so a test reads them after checking the status.
 */
export type Envelope<D> = { success: boolean; data: D; error: ErrorInfo };

export type ApiResponse<D = unknown> = {
  status: number;
  headers: Headers;
  /**
   * The parsed JSON envelope. A body that is not JSON (HTML pages) is kept here as its text and an empty one as
   * `null`, so a check over every answer (`JSON.stringify(res.json)`) still sees it; read such bodies from `text`.
   */
  json: Envelope<D>;
  /** The body as received: HTML pages, and JSON that is not an envelope (the OpenAPI document). */
  text: string;
};

type CallOptions = {
  token?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON-encoding `body`. */
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  /** Run against these bindings (e.g. other limits) instead of the worker's own. */
  bindings?: Cloudflare.Env;
};

/** One request through the worker; `D` is the type of the `data` the test reads (see `ApiResponse`). */
export async function call<D = unknown>(
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<ApiResponse<D>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.Authorization ??= `Bearer ${options.token}`;
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const request = new Request(`http://postcode.test${path}`, { method, headers, body });
  let res: Response;
  if (options.bindings) {
    const ctx = createExecutionContext();
    res = await buildApp().fetch(request, options.bindings, ctx);
    await waitOnExecutionContext(ctx);
  } else {
    res = await exports.default.fetch(request);
  }
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: parseBody<D>(text), text };
}

/** The envelope of a JSON body; the text itself for any other body, `null` for none (see `ApiResponse.json`). */
export function parseBody<D>(text: string): Envelope<D> {
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return body as Envelope<D>;
}

/** The worker's bindings with the rate limits lifted: route-wide sweeps send many requests per credential. */
export const UNLIMITED: Cloudflare.Env = {
  ...env,
  RATE_MAIL_PER_KEY: '1000000',
  RATE_MAIL_PER_IP: '1000000',
  RATE_READ_PER_CREDENTIAL: '1000000',
  RATE_OTP_SEND_PER_CREDENTIAL: '1000000',
};

/** A request through the app with some Worker vars changed (e.g. a smaller rate-limit bucket). */
export const fetchWith = <D = unknown>(
  vars: Partial<Cloudflare.Env>,
  method: string,
  path: string,
  options: Omit<CallOptions, 'bindings'> = {},
) => call<D>(method, path, { ...options, bindings: { ...env, ...vars } });

export const admin = <D = unknown>(method: string, path: string, body?: unknown) =>
  call<D>(method, path, { token: ADMIN_TOKEN, body });

export function uniqueAddress(prefix = 'user'): string {
  return `${prefix}.${crypto.randomUUID().slice(0, 12)}@example.com`;
}

export type TestAccount = {
  accountId: string;
  mailKey: string;
  serverKey: string;
  bothKey: string;
  revokedKey: string;
  publicToken: string;
  analyticsSecret: string;
  senderId: string;
  senderEmail: string;
};

/** A fresh account with one credential of every kind (each test makes its own). */
export async function newAccount(
  name = 'Test account',
  placement: { region?: string | null; jurisdiction?: string | null } = {},
): Promise<TestAccount> {
  const account = await admin<Account>('POST', '/admin/v1/accounts', { name, ...placement });
  expect(account.status).toBe(201);
  const accountId = account.json.data.id;
  const key = async (scopes: string[]) => {
    const res = await admin<ApiKey>('POST', `/admin/v1/accounts/${accountId}/api-keys`, { scopes });
    expect(res.status).toBe(201);
    return res.json.data;
  };
  const mail = await key(['mail_api']);
  const server = await key(['server_otp']);
  const both = await key(['mail_api', 'server_otp']);
  const revoked = await key(['mail_api', 'server_otp']);
  expect((await admin('DELETE', `/admin/v1/api-keys/${revoked.id}`)).status).toBe(200);
  const token = await admin<OtpToken>('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, {});
  const senderEmail = uniqueAddress('sender');
  const sender = await admin<Sender>('POST', `/admin/v1/accounts/${accountId}/senders`, {
    email: senderEmail,
    name: 'Sender Name',
  });
  return {
    accountId,
    mailKey: mail.key,
    serverKey: server.key,
    bothKey: both.key,
    revokedKey: revoked.key,
    publicToken: token.json.data.token,
    analyticsSecret: token.json.data.analyticsSecret,
    senderId: sender.json.data.id,
    senderEmail,
  };
}

export type ReceivedMail = {
  envelopeFrom: string;
  envelopeTo: string[];
  messageId: string | null;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string | null;
  /** The message as it crossed the wire. */
  raw: string;
  /** The name the client gave in EHLO (or HELO). */
  helo: string;
  /** The user the client authenticated as, or null. */
  user: string | null;
};

/** Mail the test SMTP server (or the sink at `inboxUrl`) accepted for this recipient. */
export async function inbox(to: string, inboxUrl = env.INBOX_URL): Promise<ReceivedMail[]> {
  const res = await fetch(`${inboxUrl}/messages?to=${encodeURIComponent(to)}`);
  return (await res.json()) as ReceivedMail[];
}

export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function waitForInbox(to: string, count = 1, inboxUrl = env.INBOX_URL): Promise<ReceivedMail[]> {
  return eventually(async () => {
    const mails = await inbox(to, inboxUrl);
    return mails.length >= count ? mails : undefined;
  }, `${count} mail(s) for ${to}`);
}

/** The send-log entry of one email, once it has the wanted status. */
export async function waitForStatus(
  mailKey: string,
  emailId: string,
  status: string,
  timeoutMs?: number,
): Promise<EmailLogEntry> {
  return eventually(
    async () => {
      const res = await call<EmailList>('GET', '/api/v1/emails?limit=100', { token: mailKey });
      const entry = res.json.data.emails.find((e) => e.id === emailId);
      return entry?.status === status ? entry : undefined;
    },
    `email ${emailId} to become ${status}`,
    timeoutMs,
  );
}

export function expectError(res: ApiResponse, status: number, code: string) {
  expect({ status: res.status, body: res.json }).toMatchObject({
    status,
    body: { success: false, error: { code, message: expect.any(String), requestId: res.headers.get('X-Request-Id') } },
  });
}

/** Each body is refused with 400 INVALID_INPUT and an error message that starts with the field it names. */
export async function expectFieldErrors(request: (body: unknown) => Promise<ApiResponse>, cases: [unknown, string][]) {
  for (const [body, field] of cases) {
    const res = await request(body);
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message.startsWith(field), `${JSON.stringify(body)} → ${res.json.error.message}`).toBe(true);
  }
}

/** How many emails the account's send log holds. */
export async function sendLogTotal(mailKey: string): Promise<number> {
  const res = await call<EmailList>('GET', '/api/v1/emails', { token: mailKey });
  expect(res.status).toBe(200);
  return res.json.data.total;
}

/**
 * The one-time code mailed to `to`: the line of the text part that is exactly `digits` digits, taken
 * from the newest of at least `count` mails (waits for them to arrive).
 */
export async function codeFromInbox(to: string, digits = 6, count = 1): Promise<string> {
  const mails = await waitForInbox(to, count);
  const text = mails[mails.length - 1]!.text;
  const line = new RegExp(`^[0-9]{${digits}}$`);
  const code = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => line.test(l));
  if (!code) throw new Error(`no ${digits}-digit code line in the mail to ${to}: ${JSON.stringify(text)}`);
  return code;
}

/** POST with some Worker vars changed. */
export const postWith = <D = unknown>(vars: Partial<Cloudflare.Env>, path: string, token: string, body: unknown) =>
  fetchWith<D>(vars, 'POST', path, { token, body });
