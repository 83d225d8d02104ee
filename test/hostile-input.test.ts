// The hostile-input sweep: every body route gets malformed and hostile input and must answer the
// contract's 4xx (never a 500, never a hang), with nothing stored, queued or sent.
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, call, inbox, newAccount, uniqueAddress, type ApiResponse, type TestAccount } from './support/api';
import { unknownSessionId } from './support/otp';

type Credential = 'mail' | 'server' | 'public' | 'admin';

// Hundreds of requests per route: lift the rate limits so every case reaches validation.
const UNLIMITED: Cloudflare.Env = {
  ...env,
  RATE_MAIL_PER_KEY: '1000000',
  RATE_MAIL_PER_IP: '1000000',
  RATE_READ_PER_CREDENTIAL: '1000000',
  RATE_OTP_SEND_PER_CREDENTIAL: '1000000',
};

type BodyRoute = {
  method: 'POST' | 'PUT';
  path: (ctx: Context) => string;
  credential: Credential;
  /** A valid body; every case below breaks it in one way. */
  body: (ctx: Context) => Record<string, unknown>;
  /** Mail bodies: any text (line breaks included) but NUL; may be empty when another body is given. */
  freeText?: string[];
  /** Fields that name something to look up: a broken value may also answer 404 (nothing is found). */
  lookups?: string[];
  /** Fields where an empty list is valid, and whether `{}` is a valid body. */
  emptyListValid?: string[];
  emptyBodyValid?: boolean;
};

type Context = { account: TestAccount; to: string; templateId: string; sessionId: string };

const tokenFor = (ctx: Context, credential: Credential) =>
  ({ mail: ctx.account.mailKey, server: ctx.account.serverKey, public: ctx.account.publicToken, admin: 'test-admin-token' })[
    credential
  ];

const ROUTES: Record<string, BodyRoute> = {
  'POST /api/v1/emails': {
    method: 'POST',
    path: () => '/api/v1/emails',
    credential: 'mail',
    body: (ctx) => ({ to: ctx.to, subject: 'Hi {{name}}', text: 'Hello {{name}}', vars: { name: 'Ada' }, priority: 'NORMAL' }),
    freeText: ['text'],
  },
  'POST /api/v1/templates/send': {
    method: 'POST',
    path: () => '/api/v1/templates/send',
    credential: 'mail',
    body: (ctx) => ({ to: ctx.to, templateId: ctx.templateId, vars: { name: 'Ada' }, subject: 'Subject' }),
    lookups: ['templateId'],
  },
  'POST /api/v1/templates/send-test': {
    method: 'POST',
    path: () => '/api/v1/templates/send-test',
    credential: 'mail',
    body: (ctx) => ({ to: ctx.to, priority: 'URGENT' }),
  },
  'POST /api/v1/templates': {
    method: 'POST',
    path: () => '/api/v1/templates',
    credential: 'mail',
    body: () => ({ name: 'n', subject: 's', htmlBody: '<p>x</p>', textBody: 'x' }),
    freeText: ['htmlBody', 'textBody'],
  },
  'PUT /api/v1/templates/{id}': {
    method: 'PUT',
    path: (ctx) => `/api/v1/templates/${ctx.templateId}`,
    credential: 'mail',
    body: () => ({ name: 'renamed', subject: 'new subject' }),
  },
  'POST /api/v1/instant-otp/send': {
    method: 'POST',
    path: () => '/api/v1/instant-otp/send',
    credential: 'public',
    body: (ctx) => ({ email: ctx.to, subject: 'Code', verificationLine: 'Your code:', otpDigits: 6, expiresInSeconds: 600 }),
  },
  'POST /api/v1/instant-otp/verify': {
    method: 'POST',
    path: () => '/api/v1/instant-otp/verify',
    credential: 'public',
    body: (ctx) => ({ sessionId: ctx.sessionId, email: ctx.to, code: '123456' }),
    lookups: ['sessionId', 'email'],
  },
  'POST /api/v1/otp/send': {
    method: 'POST',
    path: () => '/api/v1/otp/send',
    credential: 'public',
    body: (ctx) => ({ email: ctx.to, otpDigits: 6, expiresInSeconds: 600 }),
  },
  'POST /api/v1/otp/verify': {
    method: 'POST',
    path: () => '/api/v1/otp/verify',
    credential: 'public',
    body: (ctx) => ({ sessionId: ctx.sessionId, email: ctx.to, code: '123456' }),
    lookups: ['sessionId', 'email'],
  },
  'POST /api/v1/backend-otp/send': {
    method: 'POST',
    path: () => '/api/v1/backend-otp/send',
    credential: 'server',
    body: (ctx) => ({ email: ctx.to, subject: 'Code', verificationLine: 'Your code:', otpDigits: 6, expiresInSeconds: 600 }),
  },
  'POST /api/v1/backend-otp/verify': {
    method: 'POST',
    path: () => '/api/v1/backend-otp/verify',
    credential: 'server',
    body: (ctx) => ({ sessionId: ctx.sessionId, email: ctx.to, code: '123456' }),
    lookups: ['sessionId', 'email'],
  },
  'POST /api/v1/email-verification/send': {
    method: 'POST',
    path: () => '/api/v1/email-verification/send',
    credential: 'server',
    body: (ctx) => ({ email: ctx.to, subject: 'Code', verificationLine: 'Your code:', otpDigits: 6, expiresInSeconds: 600 }),
  },
  'POST /api/v1/email-verification/verify': {
    method: 'POST',
    path: () => '/api/v1/email-verification/verify',
    credential: 'server',
    body: (ctx) => ({ sessionId: ctx.sessionId, email: ctx.to, code: '123456' }),
    lookups: ['sessionId', 'email'],
  },
  'POST /admin/v1/accounts/{id}/senders': {
    method: 'POST',
    path: (ctx) => `/admin/v1/accounts/${ctx.account.accountId}/senders`,
    credential: 'admin',
    body: (ctx) => ({ email: ctx.to, name: 'Sender' }),
  },
  'POST /admin/v1/accounts/{id}/api-keys': {
    method: 'POST',
    path: (ctx) => `/admin/v1/accounts/${ctx.account.accountId}/api-keys`,
    credential: 'admin',
    body: () => ({ scopes: ['mail_api'], name: 'k' }),
  },
  'POST /admin/v1/accounts/{id}/otp-tokens': {
    method: 'POST',
    path: (ctx) => `/admin/v1/accounts/${ctx.account.accountId}/otp-tokens`,
    credential: 'admin',
    body: () => ({ allowedIps: ['203.0.113.0/24'] }),
    emptyListValid: ['allowedIps'],
    emptyBodyValid: true,
  },
};

/** Values of the wrong type (or shape) for a field whose valid value is `valid`. */
function wrongTypes(valid: unknown, freeText: boolean, emptyListValid: boolean): unknown[] {
  const candidates: unknown[] = [null, true, 12345, -1.5, {}, [null], { nested: { deep: true } }];
  if (!emptyListValid) candidates.push([]);
  if (!freeText) candidates.push('');
  if (typeof valid === 'number') candidates.push(String(valid), `${valid}abc`);
  if (typeof valid === 'boolean') candidates.push(String(valid));
  if (Array.isArray(valid)) candidates.push(valid.join(','), [valid]);
  return candidates.filter((c) => JSON.stringify(c) !== JSON.stringify(valid));
}

const HEADER_BREAKERS = ['\r\nBcc: victim@example.com', '\nX-Injected: 1', '\0', '\r\n.\r\nMAIL FROM:<x@example.com>'];

type Case = { name: string; send: (ctx: Context, route: BodyRoute) => Promise<ApiResponse>; expect: number[] };

function bodyCases(route: BodyRoute, ctx: Context): Case[] {
  const valid = route.body(ctx);
  const cases: Case[] = [];
  const withBody = (body: unknown, headers?: Record<string, string>) => (c: Context, r: BodyRoute) =>
    call(r.method, r.path(c), { token: tokenFor(c, r.credential), body, headers, bindings: UNLIMITED });
  const raw = (rawBody: BodyInit, headers: Record<string, string>) => (c: Context, r: BodyRoute) =>
    call(r.method, r.path(c), { token: tokenFor(c, r.credential), rawBody, headers, bindings: UNLIMITED });
  const JSON_TYPE = { 'Content-Type': 'application/json' };

  for (const [field, value] of Object.entries(valid)) {
    const freeText = route.freeText?.includes(field) ?? false;
    const broken = route.lookups?.includes(field) ? [400, 404] : [400];
    for (const wrong of wrongTypes(value, freeText, route.emptyListValid?.includes(field) ?? false)) {
      cases.push({ name: `${field} = ${JSON.stringify(wrong)}`, send: withBody({ ...valid, [field]: wrong }), expect: [400] });
    }
    if (typeof value === 'string') {
      // Line breaks are content in a mail body; everywhere else they could reach a header or an SMTP command.
      for (const breaker of freeText ? ['\0'] : HEADER_BREAKERS) {
        cases.push({ name: `${field} with ${JSON.stringify(breaker)}`, send: withBody({ ...valid, [field]: value + breaker }), expect: broken });
      }
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) {
        for (const breaker of ['\0', { nested: true }, ['a'], null]) {
          const broken = typeof breaker === 'string' ? `${String(inner)}${breaker}` : breaker;
          cases.push({ name: `${field}.${key} = ${JSON.stringify(broken)}`, send: withBody({ ...valid, [field]: { ...value, [key]: broken } }), expect: [400] });
        }
      }
    }
  }
  cases.push(
    { name: 'unknown field', send: withBody({ ...valid, unexpected: 'x' }), expect: [400] },
    { name: 'prototype pollution key', send: raw(`{"__proto__":{"admin":true},${JSON.stringify(valid).slice(1)}`, JSON_TYPE), expect: [400] },
    { name: 'null body', send: raw('null', JSON_TYPE), expect: [400] },
    { name: 'array body', send: raw(JSON.stringify([valid]), JSON_TYPE), expect: [400] },
    { name: 'string body', send: raw('"hello"', JSON_TYPE), expect: [400] },
    { name: 'empty body', send: raw('', JSON_TYPE), expect: [400] },
    ...(route.emptyBodyValid ? [] : [{ name: 'empty object', send: raw('{}', JSON_TYPE), expect: [400] }]),
    { name: 'invalid JSON', send: raw('{"to": "a@example.com",', JSON_TYPE), expect: [400] },
    { name: 'trailing garbage', send: raw(`${JSON.stringify(valid)} x`, JSON_TYPE), expect: [400] },
    { name: 'invalid UTF-8', send: raw(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), JSON_TYPE), expect: [400] },
    { name: 'JSON nested 10,000 deep', send: raw(`${'['.repeat(10_000)}${']'.repeat(10_000)}`, JSON_TYPE), expect: [400] },
    {
      name: 'field nested 10,000 deep',
      send: raw(`{"${Object.keys(valid)[0]}":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`, JSON_TYPE),
      expect: [400],
    },
    {
      name: '100,000 keys',
      send: raw(`{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":0`).join(',')}}`, JSON_TYPE),
      expect: [400, 413],
    },
    { name: 'over the limit with Content-Length', send: withBody({ ...valid, padding: 'x'.repeat(600 * 1024) }), expect: [413] },
    {
      name: 'over the limit, chunked',
      send: raw(
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (let i = 0; i < 12; i++) controller.enqueue(new TextEncoder().encode(' '.repeat(64 * 1024)));
            controller.close();
          },
        }),
        JSON_TYPE,
      ),
      expect: [413],
    },
    { name: 'missing Content-Type', send: raw(JSON.stringify(valid), {}), expect: [415] },
    { name: 'text/plain', send: raw(JSON.stringify(valid), { 'Content-Type': 'text/plain' }), expect: [415] },
    { name: 'form encoded', send: raw('to=a%40example.com', { 'Content-Type': 'application/x-www-form-urlencoded' }), expect: [415] },
    { name: 'multipart', send: raw('--x--', { 'Content-Type': 'multipart/form-data; boundary=x' }), expect: [415] },
  );
  return cases;
}

const AUTH_SHAPES: { name: string; header: (token: string) => string; expect: number[] }[] = [
  { name: 'no scheme', header: (t) => t, expect: [401] },
  { name: 'Basic scheme', header: (t) => `Basic ${btoa(`${t}:`)}`, expect: [401] },
  { name: 'two tokens', header: (t) => `Bearer ${t} ${t}`, expect: [401] },
  { name: 'empty token', header: () => 'Bearer ', expect: [401] },
  { name: 'only the scheme', header: () => 'Bearer', expect: [401] },
  { name: 'a 20 KB token', header: () => `Bearer pc_key_${'a'.repeat(20 * 1024)}`, expect: [401] },
  { name: 'CR/LF in the token', header: (t) => `Bearer ${t}%0d%0aX: y`, expect: [401] },
  { name: 'the analytics secret as bearer', header: () => 'Bearer pc_otp_sec_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', expect: [401] },
  // Auth passes with a lower-case scheme (RFC 9110: schemes are case-insensitive); the empty body then fails.
  { name: 'lower-case scheme', header: (t) => `bearer ${t}`, expect: [400] },
];

describe.each(Object.entries(ROUTES))('%s', (_name, route) => {
  const ctx = {} as Context;

  beforeAll(async () => {
    ctx.account = await newAccount('hostile');
    ctx.to = uniqueAddress('hostile');
    const template = await call('POST', '/api/v1/templates', {
      token: ctx.account.mailKey,
      body: { name: 'base', subject: 'Hi {{name}}', textBody: 'Hello {{name}}' },
    });
    ctx.templateId = template.json.data.id;
    ctx.sessionId = unknownSessionId();
  });

  it('answers every malformed body with the contract 4xx and never a 500', async () => {
    const failures: string[] = [];
    for (const testCase of bodyCases(route, ctx)) {
      const res = await testCase.send(ctx, route);
      if (!testCase.expect.includes(res.status) || res.json?.success !== false || typeof res.json?.error?.code !== 'string') {
        failures.push(`${testCase.name}: ${res.status} ${JSON.stringify(res.json)?.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('rejects every shape of a bad Authorization header', async () => {
    for (const shape of AUTH_SHAPES) {
      const token = tokenFor(ctx, route.credential);
      const res = await call(route.method, route.path(ctx), {
        rawBody: '',
        headers: { Authorization: shape.header(token), 'Content-Type': 'application/json' },
        bindings: UNLIMITED,
      });
      expect(shape.expect, `${shape.name} → ${res.status}`).toContain(res.status);
    }
  });

  afterAll(async () => {
    // Nothing stored, queued or sent for this account.
    const log = await call('GET', '/api/v1/emails', { token: ctx.account.mailKey });
    expect(log.json.data.total).toBe(0);
    const templates = await call('GET', '/api/v1/templates', { token: ctx.account.mailKey });
    expect(templates.json.data.items.map((t: { name: string }) => t.name)).toEqual(['base']);
    const history = await env.DB.prepare('SELECT COUNT(*) AS n FROM otp_verifications WHERE account_id = ?')
      .bind(ctx.account.accountId)
      .first<{ n: number }>();
    expect(history!.n).toBe(0);
    const senders = await env.DB.prepare('SELECT COUNT(*) AS n FROM senders WHERE account_id = ?').bind(ctx.account.accountId).first<{ n: number }>();
    expect(senders!.n).toBe(1); // the one newAccount made
    const keys = await env.DB.prepare('SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ?').bind(ctx.account.accountId).first<{ n: number }>();
    expect(keys!.n).toBe(4);
    await new Promise((r) => setTimeout(r, 500));
    expect(await inbox(ctx.to)).toEqual([]);
  });
});

describe('path ids', () => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await newAccount('paths');
  });

  const paths = [
    ['GET', (id: string) => `/api/v1/templates/${id}`, 'mail'],
    ['PUT', (id: string) => `/api/v1/templates/${id}`, 'mail'],
    ['DELETE', (id: string) => `/api/v1/templates/${id}`, 'mail'],
    ['GET', (id: string) => `/api/v1/email-verification/${id}`, 'server'],
    ['DELETE', (id: string) => `/admin/v1/api-keys/${id}`, 'admin'],
  ] as const;

  it('10 KB ids → 400 INVALID_INPUT, never a lookup', async () => {
    for (const [method, path, credential] of paths) {
      const token = credential === 'admin' ? 'test-admin-token' : credential === 'mail' ? account.mailKey : account.serverKey;
      const res = await call(method, path('x'.repeat(10 * 1024)), { token, body: method === 'PUT' ? { name: 'x' } : undefined });
      expect(res.status, `${method} ${path('…')}`).toBe(400);
      expect(res.json.error.code).toBe('INVALID_INPUT');
    }
  });

  it('../ and encoded traversal in ids never reach another resource', async () => {
    for (const id of ['..%2F..%2Fadmin', '%2e%2e%2f%2e%2e%2fetc', 'tpl_..%2F..', '..', '%00%00%00']) {
      const res = await call('GET', `/api/v1/templates/${id}`, { token: account.mailKey });
      expect([400, 404], `${id} → ${res.status}`).toContain(res.status);
      expect(res.json.success).toBe(false);
    }
    const res = await call('GET', '/api/v1/templates/../emails', { token: account.mailKey });
    expect(res.status).not.toBe(500);
  });

  it('CR/LF and NUL in query strings are plain data', async () => {
    for (const query of ['page=1%0d%0aX:1', 'limit=%00', 'page=1&page=2', 'limit=1e3', 'limit=0x10']) {
      const res = await call('GET', `/api/v1/emails?${query}`, { token: account.mailKey });
      expect([200, 400], `${query} → ${res.status}`).toContain(res.status);
    }
  });
});

describe('OTP history query and secret header', () => {
  it('answers hostile limits and secrets without a 500', async () => {
    const account = await newAccount('history');
    for (const limit of ['-1', 'abc', '1e9', '%00', '9'.repeat(400)]) {
      const res = await call('GET', `/api/v1/instant-otp/verifications?limit=${limit}`, {
        token: account.publicToken,
        headers: { 'X-Otp-Secret': account.analyticsSecret },
      });
      expect(res.status, limit).toBe(200);
    }
    for (const secret of ['', 'x'.repeat(20 * 1024), account.analyticsSecret.slice(0, -1), account.publicToken]) {
      const res = await call('GET', '/api/v1/instant-otp/verifications', {
        token: account.publicToken,
        headers: { 'X-Otp-Secret': secret },
      });
      expect(res.status).toBe(401);
    }
    expect((await admin('GET', '/admin/v1/settings')).status).toBe(200);
  });
});
