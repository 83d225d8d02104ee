// One declaration per route: method, path, guard, request schemas, the success response with its
// example, and the route's own errors. The Hono registration (guard → rate limit → declared query names
// → body → idempotency → zod validators → handler), the OpenAPI operation, and the route-wide tests (auth
// matrix, hostile input, route rules) all derive from it.
import { createRoute, OpenAPIHono, type z } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { LinkObject, SchemaObject } from 'openapi3-ts/oas31';
import type { Credential } from '../auth/credential';
import type { Guard } from '../auth/guards';
import type { AppEnv, GuardedEnv } from '../env';
import type { ErrorCode } from '../errors';
import { IDEMPOTENCY_KEY_PATTERN, withIdempotency } from '../middleware/idempotency';
import { MAX_JSON_BODY_BYTES, readJsonBody } from '../middleware/json-body';
import { type RateLimitCode, type RouteLimit, rateLimit } from '../middleware/rate-limit';
import { errorResponses, headerRef, operationId } from '../openapi/document';
import { declaredQueryOnly, invalidInput } from '../validation';

export type Tag =
  | 'Service'
  | 'Mail'
  | 'Templates'
  | 'Domains'
  | 'Senders'
  | 'Suppressions'
  | 'Webhooks'
  | 'Inbound'
  | 'Instant OTP'
  | 'Legacy OTP'
  | 'Backend OTP'
  | 'Email verification'
  | 'Operator';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Params = z.ZodObject | undefined;
type MediaContent = Record<string, { schema: z.ZodType | SchemaObject; example?: unknown }>;
type Page = { description: string; content: MediaContent };

/** A JSON success body and its example, for `success.content`. */
export const json = <S extends z.ZodType>(schema: S, example?: z.output<S>) => ({
  'application/json': { schema, ...(example === undefined ? {} : { example }) },
});

/** The types a declaration carries through to the handler: one parameter, so both types share it. */
type Shape = {
  method: Method;
  path: string;
  env: AppEnv;
  query: Params;
  params: Params;
  body: z.ZodType | undefined;
  status: 101 | 200 | 201;
  content: MediaContent;
};

/** The contract's success envelope, `{ success: true, data }`, answered with `status` (200 unless said). */
export function ok<T, S extends 200 | 201 = 200>(c: Context, data: T, status: S = 200 as S) {
  return c.json({ success: true as const, data }, status);
}

export type RouteDeclaration<T extends Shape> = {
  method: T['method'];
  /** OpenAPI form: /api/v1/templates/{templateId} */
  path: T['path'];
  tag: Tag;
  summary: string;
  description?: string;
  /** Required: a route without a guard does not compile (`anyone` for public routes). */
  guard: Guard<T['env']>;
  /** Route-level rate limit (after the guard): the bucket, and the 429 code the route answers. */
  limit?: T['env'] extends GuardedEnv<Credential> ? { bucket: RouteLimit; code?: RateLimitCode } : never;
  /** Takes an `Idempotency-Key` header (needs a JSON body). */
  idempotent?: T['body'] extends z.ZodType ? true : never;
  params?: T['params'];
  query?: T['query'];
  /**
   * A page a browser opens from a mailed link ignores query parameters it does not read: mail tools add
   * tracking parameters to links. Every API route refuses them (400).
   */
  unknownQuery?: 'ignored';
  /** JSON body (415, streamed 413, invalid UTF-8 and strict objects apply). */
  body?: T['body'];
  /** The body's size limit when it is not 512 KiB (routes that take attachments). */
  bodyLimit?: T['body'] extends z.ZodType ? number : never;
  bodyExample?: T['body'] extends z.ZodType ? z.input<T['body']> : never;
  /** A body the handler reads itself (documented only): the hosted page's form. */
  form?: { mediaType: string; schema: SchemaObject; example?: unknown };
  success: { status: T['status']; description?: string; content: T['content']; links?: Record<string, LinkObject> };
  /** Other non-JSON answers (documented only), e.g. the hosted page's 404 page. */
  pages?: Record<number, Page>;
  /** Errors of this route beyond those of its guard, limit, body and parameters. */
  errors?: ErrorCode[];
};

/** What `app.openapi()` reads: its types give the handler the validated input and the credential. */
export type DeclaredRoute<T extends Shape> = {
  method: T['method'];
  path: T['path'];
  middleware: MiddlewareHandler<T['env']>;
  request: {
    params: T['params'];
    query: T['query'];
    body: T['body'] extends z.ZodType
      ? { required: true; content: { 'application/json': { schema: T['body'] } } }
      : undefined;
  };
  responses: { [K in T['status']]: { description: string; content: T['content'] } };
};

/** Runs middleware in order, as one (the route's env is the guard's); a returned Response answers. */
function inOrder<E extends AppEnv>(handlers: MiddlewareHandler<E>[]): MiddlewareHandler<E> {
  if (handlers.length === 1) return handlers[0]!;
  return async (c, next) => {
    const step = async (index: number): Promise<void> => {
      if (index === handlers.length) return next();
      const answer = await handlers[index]!(c, () => step(index + 1));
      if (answer instanceof Response && !c.finalized) c.res = answer;
    };
    await step(0);
  };
}

/** A declaration whatever its types carry (every optional part allowed): what the parts of `route` read. */
type AnyDeclaration = RouteDeclaration<Omit<Shape, 'env' | 'body'> & { env: GuardedEnv<Credential>; body: z.ZodType }>;

/** The guard, then the rate limit, the query rule and the JSON body reader, in that order. */
function middlewareOf(d: AnyDeclaration, limitCode: RateLimitCode | undefined): MiddlewareHandler<AppEnv>[] {
  return [
    d.guard.middleware,
    ...(d.limit ? [rateLimit(d.limit.bucket, limitCode)] : []),
    ...(d.unknownQuery === 'ignored' ? [] : [declaredQueryOnly(Object.keys(d.query?.shape ?? {}))]),
    ...(d.body ? [readJsonBody(d.bodyLimit)] : []),
  ] as MiddlewareHandler<AppEnv>[];
}

/** Every error the route can answer: its guard's, its limit's, its body's and parameters', and its own. */
function errorsOf(d: AnyDeclaration, limitCode: RateLimitCode | undefined): ErrorCode[] {
  return [
    ...d.guard.errors,
    ...(limitCode ? [limitCode] : []),
    // Every route refuses undeclared query parameters.
    'INVALID_INPUT',
    ...(d.body ? (['INVALID_INPUT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const) : []),
    ...(d.idempotent ? (['INVALID_INPUT', 'IDEMPOTENCY_CONFLICT'] as const) : []),
    ...(d.errors ?? []),
  ];
}

/** The headers of a success: the request id, and the rate-limit and replay headers where they apply. */
function successHeadersOf(d: AnyDeclaration) {
  return {
    'X-Request-Id': headerRef('X-Request-Id'),
    ...(d.limit
      ? Object.fromEntries(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((h) => [h, headerRef(h)]))
      : {}),
    ...(d.idempotent ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {}),
  };
}

/** The request body as the document shows it: JSON with its limit, or a form the handler reads. */
function requestBodyOf(d: AnyDeclaration) {
  if (d.body) {
    return {
      required: true,
      description: `JSON, at most ${d.bodyLimit ?? MAX_JSON_BODY_BYTES} bytes (413 beyond)`,
      'x-max-body-bytes': d.bodyLimit ?? MAX_JSON_BODY_BYTES,
      content: { 'application/json': { schema: d.body, ...(d.bodyExample ? { example: d.bodyExample } : {}) } },
    };
  }
  if (d.form)
    return { required: true, content: { [d.form.mediaType]: { schema: d.form.schema, example: d.form.example } } };
  return undefined;
}

/** The error responses, with the route's pages; a page shares its status with the JSON error of that status. */
function failureResponsesOf(d: AnyDeclaration, errors: ErrorCode[], headers: object) {
  const responses: Record<string, { description: string; content?: object; headers?: object }> = errorResponses(
    errors,
    { rateLimitHeaders: Boolean(d.limit) },
  );
  for (const [status, page] of Object.entries(d.pages ?? {})) {
    const error = responses[status];
    responses[status] = error
      ? {
          ...error,
          description: `${page.description}; JSON: ${error.description}`,
          content: { ...page.content, ...error.content },
        }
      : { ...page, headers };
  }
  return responses;
}

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header' as const,
  required: false,
  description: 'Replays the first successful response for 24 h instead of sending again',
  schema: { type: 'string' as const, pattern: IDEMPOTENCY_KEY_PATTERN },
};

/**
 * Declares a route once: its middleware (guard, limit, query rule, body reader), its document entry
 * (errors, headers, body, responses) and, through its types, the handler's validated input and credential.
 */
export function route<
  const M extends Method,
  const P extends string,
  E extends AppEnv,
  S extends 101 | 200 | 201,
  C extends MediaContent,
  Q extends Params = undefined,
  R extends Params = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  declaration: RouteDeclaration<{ method: M; path: P; env: E; query: Q; params: R; body: B; status: S; content: C }>,
): DeclaredRoute<{ method: M; path: P; env: E; query: Q; params: R; body: B; status: S; content: C }> {
  const d = declaration as unknown as AnyDeclaration;
  const limitCode = d.limit ? (d.limit.code ?? 'RATE_LIMITED') : undefined;
  const headers = successHeadersOf(d);
  const body = requestBodyOf(d);
  const declared = createRoute({
    method: d.method,
    path: d.path,
    operationId: operationId(d.method, d.path),
    tags: [d.tag],
    summary: d.summary,
    ...(d.description ? { description: d.description } : {}),
    security: d.guard.security,
    ...(d.unknownQuery === 'ignored' ? { 'x-unknown-query': 'ignored' } : {}),
    middleware: inOrder(middlewareOf(d, limitCode)),
    ...(d.idempotent ? { parameters: [IDEMPOTENCY_KEY_PARAMETER] } : {}),
    request: { params: d.params, query: d.query, ...(body ? { body } : {}) },
    responses: {
      [d.success.status]: {
        description: d.success.description ?? 'Success',
        headers,
        content: d.success.content,
        ...(d.success.links ? { links: d.success.links } : {}),
      },
      ...failureResponsesOf(d, errorsOf(d, limitCode), headers),
    },
  });
  // Idempotency wraps the handler (see router()): it must run after the zod validators.
  if (d.idempotent) Object.defineProperty(declared, IDEMPOTENT, { value: true });
  return declared as never;
}

const IDEMPOTENT = Symbol('idempotent');

/**
 * A router for one resource: zod failures become the contract's 400 INVALID_INPUT, and the handler
 * of a route declared `idempotent` runs inside the Idempotency-Key check.
 */
export function router() {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw invalidInput(result.error);
    },
  });
  const register = app.openapi;
  app.openapi = ((declared: object, handler: Parameters<typeof withIdempotency>[0], hook: unknown) =>
    register(
      declared as never,
      (IDEMPOTENT in declared ? withIdempotency(handler) : handler) as never,
      hook as never,
    )) as never;
  return app;
}
