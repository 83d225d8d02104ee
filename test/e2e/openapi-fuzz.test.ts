// A property-based fuzzer over the served OpenAPI document: for every operation and every credential kind,
// requests generated from the document's own schemas (valid ones, broken ones, junk) must get an answer the
// document declares: its status, its media type, a body valid by its schema — and never a 500.
// POSTCODE_FUZZ_RUNS sets the requests per operation and credential (default 12); a failure prints the
// shrunk request that broke the rule.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { arbitraryOf, bodyArbitrary, type Schema, withKnownValues } from './schema-arbitrary';
import { succeeded } from './shared-service';

const service = inject('e2e');
const RUNS = Number(process.env.POSTCODE_FUZZ_RUNS ?? 12);
/** The same requests on every run unless another seed is asked for (`POSTCODE_FUZZ_SEED=random` draws one). */
const SEED =
  process.env.POSTCODE_FUZZ_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.POSTCODE_FUZZ_SEED ?? 29);

type Parameter = { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: Schema };
type Media = { schema?: Schema };
type Operation = {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
};
type Document = { paths: Record<string, Record<string, Operation>> };

type Credential = { name: string; headers: Record<string, string> };
type FuzzRequest = {
  path: string;
  query: string;
  headers: Record<string, string>;
  body?: string;
  /** Every part of it is valid by the document (the body checked against its schema). */
  validByDocument: boolean;
};

/** Operations left out for a credential, and why. */
const LEFT_OUT: Record<string, string> = {
  // A global operator switch: freezing mail or a zero allowance would hold up the e2e tests running beside this.
  'put /admin/v1/settings admin': 'global operator settings shared with the other e2e tests',
};

/**
 * Rules the document states in words because JSON Schema cannot (they depend on the time, on other
 * fields' values or on stored data): a request valid by the schemas may still be refused by one of these.
 */
const BEYOND_SCHEMA: RegExp[] = [
  // "in the future and at most 30 days ahead": a window that moves with the clock.
  /^(emails\[\d+\]\.)?scheduledAt: must be /,
  // A suppression's expiresAt: "in the future", the same moving window.
  /^expiresAt: must be in the future$/,
  // "names compared case-insensitively must not repeat": JSON Schema compares property names exactly.
  /^(emails\[\d+\]\.)?headers: must not repeat a header name/,
  // "unique names": JSON Schema's uniqueItems compares whole items, not one property of them.
  /^(emails\[\d+\]\.)?tags: must not repeat a tag name/,
  // The placeholders a stored template needs are data, not schema.
  /^(emails\[\d+\]\.)?vars: missing values for /,
  // The metrics' period: `from` before `to`, and at most so many days before it, a rule across two parameters.
  /^from: (must be before to|at most \d+ days before to by the (day|hour))$/,
  // A cursor is a value a page of the list answered (`nextCursor`), not a form a schema can describe.
  /^after: expected the nextCursor of a page of this list$/,
  // "page or after, not both": OpenAPI has no way to say two query parameters exclude each other.
  /^after: give page or after, not both$/,
  // Which domains an account receives at is data (its slug, its verified domains), not schema.
  /^pattern: \S+ is not a receiving domain of this account/,
  // A receiving subdomain's clash with the return path's, or its length with the domain's: data again.
  /^subdomain: \S+ (is a return path's name|is longer than 253 characters|is under a domain another account holds)/,
];

const ajv = new Ajv2020({ strict: false, allErrors: true });
// The formats the document uses (ajv knows none without ajv-formats): a value must be what its format says.
ajv.addFormat('uri', (value: string) => /^[a-z][a-z0-9+.-]*:/i.test(value) && URL.canParse(value));
ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));
ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
ajv.addFormat('email', true); // the patterns beside it say what an address is
const validators = new Map<object, ValidateFunction>();
const validatorOf = (schema: object) => {
  const validate = validators.get(schema) ?? ajv.compile(schema);
  validators.set(schema, validate);
  return validate;
};

let doc: Document;
let credentials: Credential[];
/** Real ids by path parameter name, so that requests reach past the lookups. */
const known: Record<string, string[]> = {};
/** Real values by body field name, for the same reason. */
const knownFields: Record<string, string[]> = {};

const api = succeeded;

beforeAll(async () => {
  doc = (await (await fetch(`${service.baseUrl}/api/v1/openapi.json`)).json()) as Document;
  const admin = service.adminToken;
  const account = await api<{ id: string }>('POST', '/admin/v1/accounts', admin, { name: 'fuzz' });
  const key = (scopes: string[], mode?: string) =>
    api<{ key: string }>('POST', `/admin/v1/accounts/${account.id}/api-keys`, admin, { scopes, mode });
  const [mail, server, both, test] = await Promise.all([
    key(['mail_api']),
    key(['server_otp']),
    key(['mail_api', 'server_otp']),
    key(['mail_api'], 'test'),
  ]);
  const otp = await api<{ token: string; analyticsSecret: string }>(
    'POST',
    `/admin/v1/accounts/${account.id}/otp-tokens`,
    admin,
    {},
  );
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  credentials = [
    { name: 'none', headers: {} },
    { name: 'admin', headers: bearer(admin) },
    { name: 'mail key', headers: bearer(mail.key) },
    { name: 'test key', headers: bearer(test.key) },
    { name: 'server key', headers: bearer(server.key) },
    { name: 'both scopes', headers: bearer(both.key) },
    { name: 'public token', headers: { ...bearer(otp.token), 'X-Otp-Secret': otp.analyticsSecret } },
  ];
  const sender = await api<{ email: string }>('POST', `/admin/v1/accounts/${account.id}/senders`, admin, {
    email: 'sender@fuzz.example',
  });
  const email = await api<{ id: string }>('POST', '/api/v1/emails', mail.key, {
    from: sender.email,
    to: 'someone@fuzz.example',
    subject: 'Fuzz',
    text: 'x',
    scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
  });
  const template = await api<{ id: string }>('POST', '/api/v1/templates', mail.key, {
    name: 'fuzz',
    subject: 'Hi',
    textBody: 'Your code {{code}}',
  });
  const senderId = (
    await api<{ id: string }>('POST', `/admin/v1/accounts/${account.id}/senders`, admin, {
      email: 'other-sender@fuzz.example',
      name: 'Fuzz',
    })
  ).id;
  Object.assign(knownFields, { templateId: [template.id], senderEmailId: [senderId], from: [sender.email] });
  const webhook = await api<{ id: string }>('POST', '/api/v1/webhooks', both.key, {
    url: 'https://hooks.fuzz.example/postcode',
    events: ['email.sent'],
  });
  const session = await api<{ sessionId: string }>('POST', '/api/v1/email-verification/send', server.key, {
    email: 'verify@fuzz.example',
  });
  Object.assign(known, {
    accountId: [account.id],
    emailId: [email.id],
    templateId: [template.id],
    webhookId: [webhook.id],
    sessionId: [session.sessionId],
    email: ['someone@fuzz.example'],
  });
});

/** One request for an operation: parameters from their schemas (or a real id), a body from its schema. */
/** A generated value as a form field: text as it is, anything else as JSON. */
const formValue = (x: unknown) => (typeof x === 'string' ? x : (JSON.stringify(x) ?? String(x)));

function requestArbitrary(template: string, operation: Operation, credential: Credential): fc.Arbitrary<FuzzRequest> {
  const parameters = operation.parameters ?? [];
  const value = (p: Parameter) => arbitraryOf(p.schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const pathValues = fc.record(
    Object.fromEntries(
      parameters
        .filter((p) => p.in === 'path')
        .map((p) => [p.name, known[p.name] ? fc.oneof(fc.constantFrom(...known[p.name]!), value(p)) : value(p)]),
    ),
  );
  const queryValues = fc.record(
    Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [p.name, value(p)])),
    { requiredKeys: parameters.filter((p) => p.in === 'query' && p.required).map((p) => p.name) },
  );
  const headerValues = fc.record(
    Object.fromEntries(parameters.filter((p) => p.in === 'header').map((p) => [p.name, value(p)])),
    { requiredKeys: [] },
  );
  const media = operation.requestBody?.content ?? {};
  const declaredSchema = media['application/json']?.schema;
  const jsonSchema = declaredSchema && withKnownValues(declaredSchema, knownFields);
  const body: fc.Arbitrary<{ type?: string; text?: string; valid?: boolean }> = jsonSchema
    ? bodyArbitrary(jsonSchema).map((v) => ({
        type: 'application/json',
        text: JSON.stringify(v),
        valid: validatorOf(jsonSchema)(v),
      }))
    : media['application/x-www-form-urlencoded']
      ? bodyArbitrary(media['application/x-www-form-urlencoded'].schema ?? {}).map((v) => ({
          type: 'application/x-www-form-urlencoded',
          text: new URLSearchParams(
            // JSON for a nested value: String() throws on the prototype-less objects the arbitraries make.
            v && typeof v === 'object' ? Object.entries(v).map(([k, x]) => [k, formValue(x)]) : [],
          ).toString(),
        }))
      : fc.constant({});
  return fc
    .record({ pathValues, queryValues, headerValues, body })
    .map(({ pathValues, queryValues, headerValues, body: b }) => ({
      path: template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(pathValues[name] ?? '')),
      query: new URLSearchParams(queryValues as Record<string, string>).toString(),
      headers: { ...credential.headers, ...(b.type ? { 'Content-Type': b.type } : {}), ...headerValues },
      ...(b.text === undefined ? {} : { body: b.text }),
      validByDocument: b.valid ?? b.type === undefined,
    }));
}

/**
 * The service's answer. A request sent on a kept-alive connection the server closed at that moment gets no
 * answer at all (undici: UND_ERR_SOCKET, ECONNRESET) and is sent once more; any other failure to get an answer
 * names the request and its cause.
 */
async function answerTo(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code === 'UND_ERR_SOCKET' || cause?.code === 'ECONNRESET') return fetch(url, init);
    throw new Error(`${init.method} ${url}: ${error} (${cause?.code ?? cause?.message ?? 'no cause'})`);
  }
}

/** What in the answer the document does not declare, or null when it declares all of it. */
async function undeclared(
  method: string,
  operation: Operation,
  request: FuzzRequest,
  seen: Set<number>,
): Promise<string | null> {
  const url = `${service.baseUrl}${request.path}${request.query ? `?${request.query}` : ''}`;
  const res = await answerTo(url, { method: method.toUpperCase(), headers: request.headers, body: request.body });
  const text = await res.text();
  seen.add(res.status);
  const said = `${method.toUpperCase()} ${request.path}?${request.query} ${request.body?.slice(0, 400) ?? ''} answered ${res.status}: ${text.slice(0, 300)}`;
  if (res.status === 500) return `a 500. ${said}`;
  const declared = operation.responses[String(res.status)];
  if (!declared) return `status not declared. ${said}`;
  const type = res.headers.get('Content-Type')?.split(';')[0] ?? '';
  const media = declared.content?.[type];
  if (declared.content && !media) return `media type ${type} not declared. ${said}`;
  if (type === 'application/json' && media?.schema) {
    const validate = validatorOf(media.schema);
    if (!validate(JSON.parse(text))) return `body not valid by its schema: ${JSON.stringify(validate.errors)}. ${said}`;
  }
  if (res.status === 400 && request.validByDocument) {
    const { error } = JSON.parse(text) as { error: { code: string; message: string } };
    if (error.code === 'INVALID_INPUT' && !BEYOND_SCHEMA.some((rule) => rule.test(error.message))) {
      return `a request valid by the document was refused. ${said}`;
    }
  }
  return null;
}

describe('the served document against requests generated from it', () => {
  it('declares every answer to every operation, for each credential kind', { timeout: 900_000 }, async () => {
    const statuses = new Map<string, Set<number>>();
    const problems: string[] = [];
    let checks = 0;
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const seen = new Set<number>();
        statuses.set(`${method.toUpperCase()} ${template}`, seen);
        for (const credential of credentials) {
          if (LEFT_OUT[`${method} ${template} ${credential.name}`]) continue;
          const result = await fc.check(
            fc.asyncProperty(requestArbitrary(template, operation, credential), async (request) => {
              const problem = await undeclared(method, operation, request, seen);
              if (problem) throw new Error(`${credential.name}: ${problem}`);
            }),
            { numRuns: RUNS, seed: SEED + checks++ },
          );
          // The shrunk request's problem, for every operation and credential that has one.
          if (result.failed) problems.push(String(result.errorInstance).slice(0, 1200));
        }
      }
    }
    // What the requests reached, for whoever reads the run: a fuzzer that only ever gets 401s proves little.
    console.log(`seed ${SEED} (POSTCODE_FUZZ_SEED), ${RUNS} requests per operation and credential`);
    for (const [operation, seen] of statuses) console.log(`${operation}: ${[...seen].sort().join(' ')}`);
    expect(problems).toEqual([]);
    const reachedSuccess = [...statuses.values()].filter((seen) => [...seen].some((s) => s < 300)).length;
    expect(reachedSuccess / statuses.size).toBeGreaterThan(0.5);
  });
});
