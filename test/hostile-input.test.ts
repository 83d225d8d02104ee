// The hostile-input sweep: every body route gets malformed and hostile input and must answer the
// contract's 4xx (never a 500, never a hang), with nothing stored, queued or sent.
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountDb } from './support/account-db';
import {
  type ApiResponse,
  admin,
  call,
  inbox,
  newAccount,
  type TestAccount,
  UNLIMITED,
  uniqueAddress,
} from './support/api';
import {
  type CredentialKind,
  credentialFor,
  declaredRoutes,
  fillPath,
  type JsonSchema,
  needsOtpSecret,
  tokenOf,
} from './support/declared-routes';
import { unknownSessionId } from './support/otp';
import type { EmailList, SavedTemplate, TemplateList } from './support/responses';

type Context = { account: TestAccount; to: string; templateId: string; sessionId: string };

/** A JSON body route as declared: its valid body is its documented example, pointed at this test's account. */
type BodyRoute = {
  method: string;
  path: (ctx: Context) => string;
  credential: CredentialKind;
  body: (ctx: Context) => Record<string, unknown>;
  /** Field rules read from the documented schema. */
  schema: JsonSchema;
  /** Fields that name something to look up: a broken value may also answer 404 (nothing is found). */
  lookups: string[];
  /** The documented body limit. */
  maxBytes: number;
};

/** Values of the example that must be this test's own: its recipient, template and session. */
function ownValues(example: Record<string, unknown>, ctx: Context): Record<string, unknown> {
  const own: Record<string, unknown> = { ...example };
  for (const field of ['to', 'email']) if (field in own) own[field] = ctx.to;
  if ('templateId' in own) own.templateId = ctx.templateId;
  if ('sessionId' in own) own.sessionId = ctx.sessionId;
  return own;
}

const ROUTES: [string, BodyRoute][] = declaredRoutes()
  .filter((route) => route.jsonBody)
  .map((route) => {
    const example = route.jsonBody!.example;
    expect(Object.keys(example).length, `${route.name} declares a body example`).toBeGreaterThan(0);
    expect(route.jsonBody!.maxBytes, `${route.name} documents its body limit`).toBeGreaterThan(0);
    const lookups = ['templateId', 'sessionId', ...('sessionId' in example ? ['email'] : [])];
    return [
      route.name,
      {
        method: route.method,
        path: (ctx: Context) =>
          fillPath(route, (param) => (param === 'accountId' ? ctx.account.accountId : ctx.templateId)),
        credential: credentialFor(route),
        body: (ctx: Context) => ownValues(example, ctx),
        schema: route.jsonBody!.schema,
        lookups: lookups.filter((field) => field in example),
        maxBytes: route.jsonBody!.maxBytes,
      },
    ];
  });

it('sweeps every declared JSON body route', () => {
  expect(ROUTES.length).toBeGreaterThanOrEqual(18);
});

/** The string branch of a field's schema (a plain string, or one branch of an anyOf). */
const stringSchema = (schema: JsonSchema | undefined): JsonSchema | undefined =>
  schema?.type === 'string' ? schema : schema?.anyOf?.find((branch) => branch.type === 'string');

/** Whether the documented schema lets this string through (pattern and minLength only). */
function documentedAccepts(schema: JsonSchema | undefined, value: string): boolean {
  const string = stringSchema(schema);
  if (!string) return false;
  if (string.minLength !== undefined && value.length < string.minLength) return false;
  return string.pattern === undefined || new RegExp(string.pattern).test(value);
}

/** Multi-line text by its documented pattern (mail bodies): line breaks are content there. */
const isFreeText = (schema: JsonSchema | undefined) =>
  stringSchema(schema)?.pattern !== undefined && documentedAccepts(schema, 'a\r\nb');

const acceptsNull = (schema: JsonSchema | undefined): boolean =>
  schema?.type === 'null' ||
  (Array.isArray(schema?.type) && schema.type.includes('null')) ||
  (schema?.anyOf ?? []).some(acceptsNull);

/** A candidate of the documented type and within its bounds is a valid value, not a wrong one. */
function rightType(value: unknown, schema: JsonSchema | undefined): boolean {
  const types = [schema?.type].flat();
  if (typeof value === 'boolean') return types.includes('boolean');
  if (typeof value !== 'number') return false;
  if (!types.includes('number') && !(types.includes('integer') && Number.isInteger(value))) return false;
  return value >= (schema?.minimum ?? -Infinity) && value <= (schema?.maximum ?? Infinity);
}

/** `{}` is valid when the schema requires nothing. */
const emptyBodyValid = (schema: JsonSchema) => !schema.required?.length && !schema.minProperties && !schema.anyOf;

/** Values of the wrong type (or shape) for a field whose valid value is `valid`. */
function wrongTypes(valid: unknown, schema: JsonSchema | undefined): unknown[] {
  const candidates: unknown[] = [true, 12345, -1.5, [null], { nested: { deep: true } }];
  // `{}` is a valid value of an object field that requires no property (custom headers), like `[]` of a list.
  if (!(schema?.type === 'object' && !schema.minProperties && !schema.required?.length)) candidates.push({});
  if (!acceptsNull(schema)) candidates.push(null);
  if (!(schema?.type === 'array' && !schema.minItems)) candidates.push([]);
  if (!documentedAccepts(schema, '')) candidates.push('');
  if (typeof valid === 'number') candidates.push(String(valid), `${valid}abc`);
  if (typeof valid === 'boolean') candidates.push(String(valid));
  if (Array.isArray(valid)) candidates.push(valid.join(','), [valid]);
  return candidates.filter((c) => JSON.stringify(c) !== JSON.stringify(valid) && !rightType(c, schema));
}

const HEADER_BREAKERS = ['\r\nBcc: victim@example.com', '\nX-Injected: 1', '\0', '\r\n.\r\nMAIL FROM:<x@example.com>'];

type Case = { name: string; send: (ctx: Context, route: BodyRoute) => Promise<ApiResponse>; expect: number[] };

function bodyCases(route: BodyRoute, ctx: Context): Case[] {
  const valid = route.body(ctx);
  const cases: Case[] = [];
  const withBody = (body: unknown, headers?: Record<string, string>) => (c: Context, r: BodyRoute) =>
    call(r.method, r.path(c), { token: tokenOf(c.account, r.credential), body, headers, bindings: UNLIMITED });
  const raw = (rawBody: BodyInit, headers: Record<string, string>) => (c: Context, r: BodyRoute) =>
    call(r.method, r.path(c), { token: tokenOf(c.account, r.credential), rawBody, headers, bindings: UNLIMITED });
  const JSON_TYPE = { 'Content-Type': 'application/json' };

  for (const [field, value] of Object.entries(valid)) {
    const property = route.schema.properties?.[field];
    const freeText = isFreeText(property);
    const broken = route.lookups.includes(field) ? [400, 404] : [400];
    for (const wrong of wrongTypes(value, property)) {
      cases.push({
        name: `${field} = ${JSON.stringify(wrong)}`,
        send: withBody({ ...valid, [field]: wrong }),
        expect: [400],
      });
    }
    if (typeof value === 'string') {
      // Line breaks are content in a mail body; everywhere else they could reach a header or an SMTP command.
      for (const breaker of freeText ? ['\0'] : HEADER_BREAKERS) {
        cases.push({
          name: `${field} with ${JSON.stringify(breaker)}`,
          send: withBody({ ...valid, [field]: value + breaker }),
          expect: broken,
        });
      }
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) {
        // null is a wrong value only where the documented schema does not take it (a cap set to null is lifted).
        const nullable = acceptsNull(property?.properties?.[key]);
        for (const breaker of ['\0', { nested: true }, ['a'], ...(nullable ? [] : [null])]) {
          const broken = typeof breaker === 'string' ? `${String(inner)}${breaker}` : breaker;
          cases.push({
            name: `${field}.${key} = ${JSON.stringify(broken)}`,
            send: withBody({ ...valid, [field]: { ...value, [key]: broken } }),
            expect: [400],
          });
        }
      }
    }
  }
  cases.push(
    { name: 'unknown field', send: withBody({ ...valid, unexpected: 'x' }), expect: [400] },
    {
      name: 'prototype pollution key',
      send: raw(`{"__proto__":{"admin":true},${JSON.stringify(valid).slice(1)}`, JSON_TYPE),
      expect: [400],
    },
    { name: 'null body', send: raw('null', JSON_TYPE), expect: [400] },
    { name: 'array body', send: raw(JSON.stringify([valid]), JSON_TYPE), expect: [400] },
    { name: 'string body', send: raw('"hello"', JSON_TYPE), expect: [400] },
    { name: 'empty body', send: raw('', JSON_TYPE), expect: [400] },
    ...(emptyBodyValid(route.schema) ? [] : [{ name: 'empty object', send: raw('{}', JSON_TYPE), expect: [400] }]),
    { name: 'invalid JSON', send: raw('{"to": "a@example.com",', JSON_TYPE), expect: [400] },
    { name: 'trailing garbage', send: raw(`${JSON.stringify(valid)} x`, JSON_TYPE), expect: [400] },
    {
      name: 'invalid UTF-8',
      send: raw(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), JSON_TYPE),
      expect: [400],
    },
    {
      name: 'JSON nested 10,000 deep',
      send: raw(`${'['.repeat(10_000)}${']'.repeat(10_000)}`, JSON_TYPE),
      expect: [400],
    },
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
    {
      name: 'over the limit with Content-Length',
      send: withBody({ ...valid, padding: 'x'.repeat(route.maxBytes + 88 * 1024) }),
      expect: [413],
    },
    {
      name: 'over the limit, chunked',
      send: raw(
        new ReadableStream<Uint8Array>({
          start(controller) {
            const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
            for (let i = 0; i <= route.maxBytes / chunk.length; i++) controller.enqueue(chunk);
            controller.close();
          },
        }),
        JSON_TYPE,
      ),
      expect: [413],
    },
    { name: 'missing Content-Type', send: raw(JSON.stringify(valid), {}), expect: [415] },
    { name: 'text/plain', send: raw(JSON.stringify(valid), { 'Content-Type': 'text/plain' }), expect: [415] },
    {
      name: 'form encoded',
      send: raw('to=a%40example.com', { 'Content-Type': 'application/x-www-form-urlencoded' }),
      expect: [415],
    },
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
  {
    name: 'the analytics secret as bearer',
    header: () => 'Bearer pc_otp_sec_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    expect: [401],
  },
  // Auth passes with a lower-case scheme (RFC 9110: schemes are case-insensitive); the empty body then fails.
  { name: 'lower-case scheme', header: (t) => `bearer ${t}`, expect: [400] },
];

describe.each(ROUTES)('%s', (_name, route) => {
  const ctx = {} as Context;

  beforeAll(async () => {
    ctx.account = await newAccount('hostile');
    ctx.to = uniqueAddress('hostile');
    const template = await call<SavedTemplate>('POST', '/api/v1/templates', {
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
      if (
        !testCase.expect.includes(res.status) ||
        res.json?.success !== false ||
        typeof res.json?.error?.code !== 'string'
      ) {
        failures.push(`${testCase.name}: ${res.status} ${JSON.stringify(res.json)?.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('rejects every shape of a bad Authorization header', async () => {
    for (const shape of AUTH_SHAPES) {
      const token = tokenOf(ctx.account, route.credential);
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
    const log = await call<EmailList>('GET', '/api/v1/emails', { token: ctx.account.mailKey });
    expect(log.json.data.total).toBe(0);
    const templates = await call<TemplateList>('GET', '/api/v1/templates', { token: ctx.account.mailKey });
    expect(templates.json.data.items.map((t) => t.name)).toEqual(['base']);
    const history = await accountDb(ctx.account.accountId)
      .prepare('SELECT COUNT(*) AS n FROM otp_verifications WHERE account_id = ?')
      .bind(ctx.account.accountId)
      .first<{ n: number }>();
    expect(history!.n).toBe(0);
    const senders = await env.DB.prepare('SELECT COUNT(*) AS n FROM senders WHERE account_id = ?')
      .bind(ctx.account.accountId)
      .first<{ n: number }>();
    expect(senders!.n).toBe(1); // the one newAccount made
    const keys = await env.DB.prepare('SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ?')
      .bind(ctx.account.accountId)
      .first<{ n: number }>();
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

  const withIds = declaredRoutes().filter((route) => route.pathParams.length > 0);

  it('10 KB ids → 400 INVALID_INPUT on every route with an id in its path, never a lookup', async () => {
    expect(withIds.length).toBeGreaterThanOrEqual(8);
    for (const route of withIds) {
      const path = fillPath(route, () => 'x'.repeat(10 * 1024));
      const res = await call(route.method, path, {
        token: tokenOf(account, credentialFor(route)),
        body: route.jsonBody?.example,
      });
      expect(res.status, route.name).toBe(400);
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

  it('CR/LF and NUL in query strings are plain data on every route with a query', async () => {
    const withQuery = declaredRoutes().filter(
      (route) => route.queryParams.length > 0 && route.operation.security.length > 0,
    );
    expect(withQuery.length).toBeGreaterThanOrEqual(5);
    for (const route of withQuery) {
      const headers: Record<string, string> = needsOtpSecret(route) ? { 'X-Otp-Secret': account.analyticsSecret } : {};
      for (const name of route.queryParams) {
        for (const value of ['1%0d%0aX:1', '%00', '1e3', '0x10', `1&${name}=2`]) {
          const res = await call('GET', `${route.path}?${name}=${value}`, {
            token: tokenOf(account, credentialFor(route)),
            headers,
          });
          expect([200, 400], `${route.name} ?${name}=${value} → ${res.status}`).toContain(res.status);
        }
      }
    }
  });
});

describe('OTP history query and secret header', () => {
  it('answers hostile limits and secrets without a 500', async () => {
    const account = await newAccount('history');
    // Whole numbers are capped to 1-100; anything else is refused.
    for (const [limit, status] of [
      ['-1', 200],
      ['9'.repeat(400), 200],
      ['abc', 400],
      ['1e9', 400],
      ['%00', 400],
    ] as const) {
      const res = await call('GET', `/api/v1/instant-otp/verifications?limit=${limit}`, {
        token: account.publicToken,
        headers: { 'X-Otp-Secret': account.analyticsSecret },
      });
      expect(res.status, limit).toBe(status);
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
