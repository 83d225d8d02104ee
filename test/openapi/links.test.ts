// The document's links, which stateful clients and fuzzers follow: each names an operation that exists and
// that the source's credential may call, only parameters of that operation, and runtime expressions that
// resolve in what the source operation declares (its request, or its success response inside the
// `{ success, data }` envelope: schema and example alike).
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
type Media = { schema?: Schema; example?: unknown };
type Security = Record<string, string[]>[];
/** `x-security`: the source's ways in that may follow the link, when not all of them may. */
type Link = {
  operationId?: string;
  parameters?: Record<string, unknown>;
  requestBody?: unknown;
  'x-security'?: Security;
};
type Response = { content?: Record<string, Media>; headers?: Record<string, unknown>; links?: Record<string, Link> };
type Parameter = { name: string; in: string };
type Operation = {
  operationId: string;
  security: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, Response>;
};
type Served = { paths: Record<string, Record<string, Operation>> };

/** A link as found in the document: where it starts (operation and status) and what it says. */
type Found = { name: string; source: Operation; response: Response; link: Link };

let operations: Operation[] = [];
let links: Found[] = [];

beforeAll(async () => {
  const res = await call('GET', '/api/v1/openapi.json');
  const served = JSON.parse(res.text) as Served;
  operations = Object.values(served.paths).flatMap((byMethod) => Object.values(byMethod));
  links = Object.entries(served.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).flatMap(([method, source]) =>
      Object.entries(source.responses).flatMap(([status, response]) =>
        Object.entries(response.links ?? {}).map(([name, link]) => ({
          name: `${method.toUpperCase()} ${path} ${status} → ${name}`,
          source,
          response,
          link,
        })),
      ),
    ),
  );
});

const byId = (operationId: string | undefined) => operations.find((o) => o.operationId === operationId);

/** JSON pointer tokens (RFC 6901) of `#/a/b`. */
const pointerTokens = (pointer: string) =>
  pointer === ''
    ? []
    : pointer
        .replace(/^\//, '')
        .split('/')
        .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));

/**
 * The schema at `tokens` below `schema`, or why there is none. Each step must be certain in a success: an object
 * property that is required (the client can always follow), or an item of an array.
 */
function schemaAt(schema: Schema | undefined, tokens: string[]): Schema | string {
  if (!schema) return 'no schema';
  if (tokens.length === 0) return schema;
  const branches = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  if (branches) {
    const found = branches.map((b) => schemaAt(b, tokens)).find((s) => typeof s !== 'string');
    return found ?? `no branch has /${tokens.join('/')}`;
  }
  const [token, ...rest] = tokens as [string, ...string[]];
  if (schema.items && /^\d+$/.test(token)) return schemaAt(schema.items, rest);
  const property = schema.properties?.[token];
  if (!property) return `no property ${token}`;
  if (!schema.required?.includes(token)) return `${token} is not required`;
  return schemaAt(property, rest);
}

function valueAt(value: unknown, tokens: string[]): unknown {
  return tokens.reduce<unknown>(
    (at, token) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[token] : undefined),
    value,
  );
}

/** Problems with one runtime expression of a link from `found.source`. */
function expressionProblems(found: Found, expression: unknown): string[] {
  if (typeof expression !== 'string' || !expression.startsWith('$')) return []; // a literal value
  const body = /^\$(request|response)\.body#(.*)$/.exec(expression);
  if (body) {
    const media =
      body[1] === 'response'
        ? found.response.content?.['application/json']
        : found.source.requestBody?.content['application/json'];
    if (!media) return [`${expression}: the source declares no JSON ${body[1]} body`];
    const tokens = pointerTokens(body[2]!);
    const schema = schemaAt(media.schema, tokens);
    const problems = typeof schema === 'string' ? [`${expression}: not in the schema (${schema})`] : [];
    const example = valueAt(media.example, tokens);
    if (example === undefined || (example !== null && typeof example === 'object')) {
      problems.push(`${expression}: the example has no value there`);
    }
    return problems;
  }
  const parameter = /^\$request\.(path|query|header)\.(.+)$/.exec(expression);
  if (parameter) {
    const declared = (found.source.parameters ?? []).some((p) => p.in === parameter[1] && p.name === parameter[2]);
    return declared ? [] : [`${expression}: the source has no such parameter`];
  }
  return [`${expression}: not an expression this document uses`];
}

/** Problems with one link: its target, its parameters, its body and the credential it needs. */
function linkProblems(found: Found): string[] {
  const { link } = found;
  const target = byId(link.operationId);
  if (!target) return [`operationId ${link.operationId} names no operation`];
  const problems: string[] = [];
  for (const [qualified, expression] of Object.entries(link.parameters ?? {})) {
    const [place, name] = qualified.includes('.') ? qualified.split('.', 2) : [undefined, qualified];
    const known = (target.parameters ?? []).some((p) => p.name === name && (place === undefined || p.in === place));
    if (!known) problems.push(`parameter ${qualified} is not a parameter of ${link.operationId}`);
    problems.push(...expressionProblems(found, expression));
  }
  if (link.requestBody !== undefined) {
    const targetBody = target.requestBody?.content['application/json']?.schema;
    if (!targetBody) problems.push(`${link.operationId} takes no JSON body`);
    const fields = link.requestBody !== null && typeof link.requestBody === 'object' ? link.requestBody : {};
    for (const [field, expression] of Object.entries(fields)) {
      if (!targetBody?.properties?.[field]) problems.push(`requestBody.${field} is not a field of ${link.operationId}`);
      problems.push(...expressionProblems(found, expression));
    }
    if (typeof link.requestBody === 'string') problems.push(...expressionProblems(found, link.requestBody));
  }
  // Whoever called the source can call the target: each way in to the source (or to the link, when it names a
  // subset of them) is a way in to the target.
  const schemes = (requirement: Record<string, string[]>) => Object.keys(requirement).sort().join('+');
  const sourceWays = new Set(found.source.security.map(schemes));
  const followers = link['x-security'] ?? found.source.security;
  for (const way of followers) {
    if (!sourceWays.has(schemes(way))) problems.push(`x-security: ${schemes(way)} is not a way in to the source`);
  }
  const canFollow = followers.every((held) =>
    target.security.some((needed) => Object.keys(needed).every((scheme) => scheme in held)),
  );
  if (!canFollow) problems.push(`${link.operationId} needs a credential the source's caller may not hold`);
  return problems;
}

describe('links in the served document', () => {
  it('name an operation the same credential may call, its parameters, and expressions that resolve', () => {
    const problems = links.flatMap((found) => linkProblems(found).map((problem) => `${found.name}: ${problem}`));
    expect(problems).toEqual([]);
    expect(links.length).toBeGreaterThanOrEqual(30);
  });

  it('reach every path parameter: each operation taking one is the target of a link that fills them all', () => {
    const unreached = operations
      .filter((operation) => (operation.parameters ?? []).some((p) => p.in === 'path'))
      .filter((operation) => {
        const pathParams = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        return !links.some(
          ({ link }) =>
            link.operationId === operation.operationId &&
            pathParams.every((name) => name in (link.parameters ?? {}) || `path.${name}` in (link.parameters ?? {})),
        );
      })
      .map((operation) => operation.operationId);
    expect(unreached).toEqual([]);
  });

  it('catches a link that does not resolve (the checks above can fail)', () => {
    const source = byId('postApiV1Emails')!;
    const response = source.responses['200']!;
    const broken = (link: Link) => linkProblems({ name: 'broken', source, response, link });
    expect(broken({ operationId: 'getApiV1EmailsEmailId', parameters: { emailId: '$response.body#/id' } })).toEqual([
      '$response.body#/id: not in the schema (no property id)',
      '$response.body#/id: the example has no value there',
    ]);
    expect(broken({ operationId: 'getApiV1EmailsEmailId', parameters: { id: '$response.body#/data/id' } })).toEqual([
      'parameter id is not a parameter of getApiV1EmailsEmailId',
    ]);
    expect(broken({ operationId: 'getApiV1EmailsNope' })).toEqual([
      'operationId getApiV1EmailsNope names no operation',
    ]);
    expect(broken({ operationId: 'getApiV1InstantOtpVerifications' })).toEqual([
      "getApiV1InstantOtpVerifications needs a credential the source's caller may not hold",
    ]);
    // A link for some of the source's callers: only ways in to the source, and each must reach the target.
    const instantSend = byId('postApiV1InstantOtpSend')!;
    const forSome = (link: Link) =>
      linkProblems({ name: 'for some', source: instantSend, response: instantSend.responses['200']!, link });
    const status = {
      operationId: 'getApiV1InstantOtpSessionsSessionId',
      parameters: { sessionId: '$response.body#/data/sessionId' },
    };
    expect(forSome(status)).toEqual([
      "getApiV1InstantOtpSessionsSessionId needs a credential the source's caller may not hold",
    ]);
    expect(forSome({ ...status, 'x-security': [{ serverOtpKey: [] }] })).toEqual([]);
    expect(forSome({ ...status, 'x-security': [{ publicOtpToken: [] }] })).toEqual([
      "getApiV1InstantOtpSessionsSessionId needs a credential the source's caller may not hold",
    ]);
    expect(forSome({ ...status, 'x-security': [{ adminToken: [] }] })).toEqual([
      'x-security: adminToken is not a way in to the source',
      "getApiV1InstantOtpSessionsSessionId needs a credential the source's caller may not hold",
    ]);
  });
});
