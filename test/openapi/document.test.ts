import { exports } from 'cloudflare:workers';
import type { z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { EVENT_TYPES } from '../../src/webhooks/events';
import { call } from '../support/api';
import { declaredRoutes, document, type JsonSchema } from '../support/declared-routes';

type Header = { $ref?: string; required?: boolean };
type Response = {
  headers?: Record<string, Header>;
  content?: Record<string, { examples?: object; schema?: JsonSchema }>;
  links?: Record<string, { operationId: string }>;
};
type Components = { headers: Record<string, Header>; securitySchemes: Record<string, object> };
/** GET /api/v1/openapi.json as served, as far as these tests read it. */
type ServedDocument = {
  openapi: string;
  servers: unknown[];
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
};

const doc = document() as unknown as ReturnType<typeof document> & { components: Components; openapi: string };
const routes = declaredRoutes();
const responsesOf = (name: string) =>
  routes.find((r) => r.name === name)!.operation.responses as Record<string, Response>;
const parameter = (name: string, param: string) =>
  (routes.find((r) => r.name === name)!.operation.parameters ?? []).find((p) => p.name === param)!;

/** Every route but the dashboard's pages (HTML for browsers, checked by test/routes/dashboard/pages.test.ts). */
const registeredRoutes = () =>
  new Set(
    buildApp()
      .routes.filter((r) => r.method !== 'ALL' && !r.path.startsWith('/dashboard'))
      .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z]+)/g, '{$1}')}`),
  );

describe('GET /api/v1/openapi.json', () => {
  it('serves the document of every registered route, and nothing else', async () => {
    const res = await call('GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    // The document is JSON but not an envelope: read it from the text.
    const body = JSON.parse(res.text) as ServedDocument;
    expect(body.openapi).toBe('3.1.0');
    expect(body.servers).toEqual([{ url: 'http://postcode.test', description: 'This service' }]);
    const served = Object.entries(body.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(served.sort()).toEqual([...registeredRoutes()].sort());
    // Its own response is documented with a schema, not as an opaque object.
    const own = body.paths['/api/v1/openapi.json']?.get?.responses['200']?.content?.['application/json']?.schema;
    expect(own?.required).toEqual(expect.arrayContaining(['openapi', 'info', 'paths']));
  });

  it('covers the 17 endpoints of the interface', () => {
    const endpoints = [
      'POST /api/v1/emails',
      'GET /api/v1/emails',
      'POST /api/v1/templates/send',
      'POST /api/v1/templates/send-test',
      'GET /api/v1/templates',
      'GET /api/v1/templates/{templateId}',
      'POST /api/v1/instant-otp/send',
      'POST /api/v1/instant-otp/verify',
      'GET /api/v1/instant-otp/verifications',
      'POST /api/v1/otp/send',
      'POST /api/v1/otp/verify',
      'GET /api/v1/otp/verifications',
      'POST /api/v1/backend-otp/send',
      'POST /api/v1/backend-otp/verify',
      'GET /api/v1/backend-otp/verifications',
      'POST /api/v1/email-verification/send',
      'POST /api/v1/email-verification/verify',
    ];
    const names = new Set(routes.map((r) => r.name));
    for (const endpoint of endpoints) expect(names.has(endpoint), endpoint).toBe(true);
    expect(new Set(routes.map((r) => r.operation.operationId)).size).toBe(routes.length);
  });

  it('declares the security schemes, one per key scope, and what each route needs', () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([
      'adminToken',
      'mailApiKey',
      'otpSecret',
      'publicOtpToken',
      'serverOtpKey',
    ]);
    const security = (name: string) => routes.find((r) => r.name === name)!.operation.security;
    expect(security('GET /api/v1/instant-otp/verifications')).toEqual([{ publicOtpToken: [], otpSecret: [] }]);
    expect(security('POST /api/v1/instant-otp/send')).toEqual([{ publicOtpToken: [] }, { serverOtpKey: [] }]);
    expect(security('POST /api/v1/emails')).toEqual([{ mailApiKey: [] }]);
    expect(security('PUT /admin/v1/settings')).toEqual([{ adminToken: [] }]);
    expect(security('GET /health')).toEqual([]);
  });

  it('lists the contract errors by status, with the envelope and an example per code', () => {
    const responses = responsesOf('POST /api/v1/emails');
    expect(Object.keys(responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    expect(Object.keys(responses['429']!.content!['application/json']!.examples!).sort()).toEqual([
      'DAILY_LIMIT_REACHED',
      'RATE_LIMITED',
    ]);
    expect(Object.keys(responses['403']!.content!['application/json']!.examples!)).toEqual([
      'SCOPE_REQUIRED',
      'SENDER_NOT_VERIFIED',
    ]);
  });

  it('lists SENDER_NOT_VERIFIED only where a sender can be chosen', () => {
    const withSender = routes
      .filter((r) => JSON.stringify(r.operation.responses).includes('SENDER_NOT_VERIFIED'))
      .map((r) => r.name)
      .sort();
    expect(withSender).toEqual([
      'POST /api/v1/emails',
      'POST /api/v1/emails/batch',
      'POST /api/v1/instant-otp/send',
      'POST /api/v1/templates/send',
      'POST /api/v1/templates/send-test',
    ]);
    for (const route of routes.filter((r) => withSender.includes(r.name))) {
      const schema = route.jsonBody!.schema;
      // The batch: each of its emails names its sender.
      const fields = Object.keys((schema.properties!.emails?.items ?? schema).properties!);
      expect(fields.includes('senderEmailId') || fields.includes('from'), route.name).toBe(true);
    }
  });

  it('lists 404 TEMPLATE_NOT_FOUND on every route that takes a templateId', () => {
    const takesTemplateId = (route: (typeof routes)[number]) => {
      const schema = route.jsonBody?.schema;
      const fields = { ...schema?.properties, ...schema?.properties?.emails?.items?.properties };
      return 'templateId' in fields || route.pathParams.includes('templateId');
    };
    const taking = routes.filter(takesTemplateId).map((r) => r.name);
    expect(taking).toEqual(
      expect.arrayContaining([
        'POST /api/v1/emails',
        'POST /api/v1/emails/batch',
        'POST /api/v1/templates/send',
        'POST /api/v1/instant-otp/send',
        'POST /api/v1/otp/send',
        'POST /api/v1/backend-otp/send',
        'POST /api/v1/email-verification/send',
        'GET /api/v1/templates/{templateId}',
      ]),
    );
    for (const name of taking) {
      const examples = responsesOf(name)['404']?.content?.['application/json']?.examples ?? {};
      expect(Object.keys(examples), name).toContain('TEMPLATE_NOT_FOUND');
    }
  });

  it('documents X-Request-Id on every response, Retry-After (required) on every 429, RateLimit-* on limited routes', () => {
    expect(doc.components.headers['Retry-After']!.required).toBe(true);
    for (const route of routes) {
      for (const [status, response] of Object.entries(route.operation.responses as Record<string, Response>)) {
        expect(response.headers?.['X-Request-Id'], `${route.name} ${status}`).toEqual({
          $ref: '#/components/headers/X-Request-Id',
        });
        if (status === '429') expect(response.headers?.['Retry-After'], `${route.name} 429`).toBeDefined();
      }
    }
    expect(responsesOf('GET /api/v1/emails')['200']!.headers).toHaveProperty('RateLimit-Remaining');
    expect(responsesOf('POST /api/v1/emails')['200']!.headers).toHaveProperty('Idempotent-Replayed');
    expect(parameter('POST /api/v1/emails', 'Idempotency-Key').schema.pattern).toBe(
      '^[\\x21-\\x7e]{1,255}$(?![\\s\\S])',
    );
  });

  it('documents page, limit and the cursor (after → nextCursor) on every paged list', () => {
    const paged = routes.filter((route) => route.queryParams.includes('page')).map((route) => route.name);
    expect(paged).toEqual(
      expect.arrayContaining(['GET /api/v1/emails', 'GET /api/v1/templates', 'GET /api/v1/suppressions']),
    );
    for (const name of paged) {
      expect(parameter(name, 'page').schema, name).toMatchObject({
        type: 'integer',
        minimum: 1,
        maximum: 1_000_000,
        default: 1,
      });
      expect(parameter(name, 'limit').schema, name).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
      expect(parameter(name, 'after').schema, name).toMatchObject({
        type: 'string',
        pattern: expect.stringMatching(/^\^\[A-Za-z0-9_-\]\+\$/),
      });
      const data = responsesOf(name)['200']?.content?.['application/json']?.schema?.properties?.data;
      expect(data?.properties?.nextCursor, name).toMatchObject({ type: ['string', 'null'] });
      expect(data?.required, name).toContain('nextCursor');
    }
  });

  it('documents the history limit as capped, not refused: no bounds, and what a value out of range becomes', () => {
    for (const name of [
      'GET /api/v1/instant-otp/verifications',
      'GET /api/v1/otp/verifications',
      'GET /api/v1/backend-otp/verifications',
    ]) {
      const { minimum, maximum, description, ...schema } = parameter(name, 'limit').schema as JsonSchema & {
        description?: string;
      };
      expect({ minimum, maximum }, name).toEqual({ minimum: undefined, maximum: undefined });
      expect(schema, name).toEqual({ type: 'integer', default: 50 });
      expect(description, name).toMatch(/above 100 is treated as 100/);
      expect(description, name).toMatch(/below 1 \(0 or negative\) as 1/);
    }
  });

  it('says in request schemas what the server enforces', () => {
    const body = (name: string) => routes.find((r) => r.name === name)!.jsonBody!.schema;
    const address = body('POST /api/v1/backend-otp/send').properties!.email!;
    const pattern = new RegExp(address.pattern!);
    for (const good of ['ada@example.com', '"quoted"@example.com', 'a.b+c@sub.example.co'])
      expect(pattern.test(good), good).toBe(true);
    for (const bad of ['ada@localhost', 'ada@example.123', 'a..b@example.com', 'ada@example.com\r\nBcc: x@y.z']) {
      expect(pattern.test(bad), bad).toBe(false);
    }
    expect(body('POST /api/v1/backend-otp/verify').properties!.code!.pattern).toBe('^[0-9]{4,10}$(?![\\s\\S])');
    expect(body('POST /api/v1/templates').anyOf).toEqual([
      { required: ['htmlBody'], properties: { htmlBody: { minLength: 1 } } },
      { required: ['textBody'], properties: { textBody: { minLength: 1 } } },
    ]);
    expect(body('PUT /api/v1/templates/{templateId}').minProperties).toBe(1);
    expect(body('POST /api/v1/emails').properties!.subject!.pattern).toBe('^[^\\r\\n\\x00]*$(?![\\s\\S])');
    const allowedIps = body('POST /admin/v1/accounts/{accountId}/otp-tokens').properties!.allowedIps!;
    expect(allowedIps.items!.pattern).toBeDefined();
  });

  it("ends every pattern where Python's `$` ends too: no trailing newline slips through", () => {
    // Python's `re` (Hypothesis, jsonschema) also matches `$` before a final newline: `^[^\n]*$` takes "Acme\n".
    const patterns = [...JSON.stringify(doc).matchAll(/"pattern":("(?:[^"\\]|\\.)*")/g)].map(
      (m) => JSON.parse(m[1]!) as string,
    );
    expect(patterns.length).toBeGreaterThan(30);
    expect(patterns.filter((pattern) => /(?<!\\)\$$/.test(pattern))).toEqual([]);
  });

  it('documents the hosted page: its 404 page, its form body and its JSON answer', () => {
    expect(Object.keys(responsesOf('GET /verify')['404']!.content!)).toEqual(['text/html']);
    const submit = routes.find((r) => r.name === 'POST /verify')!.operation;
    const form = submit.requestBody!.content['application/x-www-form-urlencoded']!.schema;
    // The code form, or the one-click link's button.
    expect(form.anyOf!.map((branch) => branch.required)).toEqual([
      ['sessionId', 'email', 'code'],
      ['sessionId', 'token'],
    ]);
    expect(Object.keys((submit.responses as Record<string, Response>)['200']!.content!).sort()).toEqual([
      'application/json',
      'text/html',
    ]);
  });

  it('links sends to their verify, resend and status routes, and a created template to the routes taking its id', () => {
    const operationIds = new Set(routes.map((r) => r.operation.operationId));
    const linked = (name: string, status = '200') =>
      Object.values(responsesOf(name)[status]!.links ?? {}).map((l) => l.operationId);
    expect(linked('POST /api/v1/backend-otp/send')).toEqual(['postApiV1BackendOtpVerify', 'postApiV1BackendOtpResend']);
    expect(linked('POST /api/v1/email-verification/send')).toEqual([
      'postApiV1EmailVerificationVerify',
      'postApiV1EmailVerificationResend',
      'getApiV1EmailVerificationSessionId',
    ]);
    expect(linked('POST /api/v1/templates', '201')).toEqual([
      'getApiV1TemplatesTemplateId',
      'putApiV1TemplatesTemplateId',
      'deleteApiV1TemplatesTemplateId',
      'postApiV1TemplatesSend',
    ]);
    for (const queues of ['POST /api/v1/emails', 'POST /api/v1/templates/send', 'POST /api/v1/templates/send-test']) {
      expect(linked(queues), queues).toEqual([
        'getApiV1EmailsEmailId',
        'patchApiV1EmailsEmailId',
        'postApiV1EmailsEmailIdCancel',
      ]);
    }
    for (const route of routes) {
      for (const response of Object.values(route.operation.responses as Record<string, Response>)) {
        for (const link of Object.values(response.links ?? {}))
          expect(operationIds.has(link.operationId), link.operationId).toBe(true);
      }
    }
  });
});

describe('examples in the document', () => {
  type Media = { schema?: z.ZodType | object; example?: unknown };
  type RouteDefinition = {
    method: string;
    path: string;
    request?: { body?: { content: Record<string, Media> } };
    responses: Record<string, { content?: Record<string, Media> }>;
  };
  const definitions = buildApp()
    .openAPIRegistry.definitions.filter((d) => d.type === 'route')
    .map((d) => (d as unknown as { route: RouteDefinition }).route);
  const isZod = (schema: unknown): schema is z.ZodType => typeof (schema as z.ZodType)?.safeParse === 'function';

  it('every JSON body route and every JSON success has an example, valid for its schema', () => {
    let checked = 0;
    for (const route of definitions) {
      const media = [
        route.request?.body?.content['application/json'],
        ...Object.entries(route.responses)
          .filter(([status]) => status.startsWith('2'))
          .map(([, response]) => response.content?.['application/json']),
      ];
      for (const { schema, example } of media.filter((m): m is Media => m !== undefined && isZod(m.schema))) {
        if (route.path === '/api/v1/openapi.json') continue;
        expect(example, `${route.method} ${route.path}: an example`).toBeDefined();
        const parsed = (schema as z.ZodType).safeParse(example);
        expect(parsed.success, `${route.method} ${route.path}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(45);
  });
});

describe('GET /docs', () => {
  it('serves the interactive reference from this service, not a CDN, with only what works offline', async () => {
    const res = await call('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toContain('text/html');
    expect(res.headers.get('X-Request-Id')).toMatch(/^req_/);
    expect(res.text).toContain('/api/v1/openapi.json');
    expect(res.text).toContain('src="/vendor/scalar/standalone.js"');
    expect(res.text).not.toMatch(/cdn\.jsdelivr|unpkg\.com/);
    const config = res.text.replace(/\s+/g, '');
    for (const setting of [
      '"showToolbar":"never"',
      '"agent":{"disabled":true}',
      '"mcp":{"disabled":true}',
      '"telemetry":false',
    ]) {
      expect(config).toContain(setting);
    }
  });
});

describe('GET /vendor/scalar/standalone.js', () => {
  const fetchScript = (acceptEncoding?: string) =>
    exports.default.fetch(
      new Request('http://postcode.test/vendor/scalar/standalone.js', {
        headers: acceptEncoding === undefined ? {} : { 'Accept-Encoding': acceptEncoding },
      }),
    );

  it('serves the reference bundle gzipped to a client that takes gzip, and the same script decoded to one that does not', async () => {
    const gzipped = await fetchScript('br, gzip');
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers.get('Content-Type')).toBe('text/javascript; charset=utf-8');
    expect(gzipped.headers.get('Content-Encoding')).toBe('gzip');
    expect(gzipped.headers.get('Vary')).toBe('Accept-Encoding');
    expect(gzipped.headers.get('X-Request-Id')).toMatch(/^req_/);
    const script = await gzipped.text(); // decoded by the runtime's fetch, as a browser does
    expect(script.length).toBeGreaterThan(1_000_000);
    expect(script).toContain('createApiReference');

    for (const acceptEncoding of [undefined, 'identity', 'gzip;q=0, br']) {
      const plain = await fetchScript(acceptEncoding);
      expect(plain.status, String(acceptEncoding)).toBe(200);
      expect(plain.headers.get('Content-Encoding'), String(acceptEncoding)).toBeNull();
      expect(await plain.text(), String(acceptEncoding)).toBe(script);
    }
  });

  it('is the only file beside it: other paths under /vendor are the JSON 404', async () => {
    for (const path of [
      '/vendor/scalar/standalone.js.gz',
      '/vendor/scalar/other.js',
      '/public/vendor/scalar/standalone.js',
    ]) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.json.error.code, path).toBe('NOT_FOUND');
    }
  });
});

describe('the webhooks section', () => {
  it('describes every event postcode sends, with the signature headers and a payload without secrets', () => {
    const webhooks = (
      doc as unknown as {
        webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: JsonSchema }> } } }>;
      }
    ).webhooks;
    expect(Object.keys(webhooks).sort()).toEqual([...EVENT_TYPES, 'webhook.test'].sort());
    for (const [type, { post }] of Object.entries(webhooks)) {
      const schema = post.requestBody.content['application/json']!.schema;
      expect(schema.required, type).toEqual(['type', 'createdAt', 'data']);
      expect(JSON.stringify(schema), type).not.toMatch(/"code"|hash|secret/i);
      expect(JSON.stringify(post), type).toContain('webhook-signature');
    }
  });
});
