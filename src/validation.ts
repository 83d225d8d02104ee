import { z } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './env';
import { ApiError } from './errors';
import { readAtMost } from './streams';

export const MAX_JSON_BODY_BYTES = 512 * 1024;
/** Routes that take attachments: their base64 content may take a body past 512 KiB (see `checkContentSize`). */
export const MAX_ATTACHMENT_BODY_BYTES = 16 * 1024 * 1024;

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;
/** Strict UTF-8 (one decoder for every request: a whole-buffer decode keeps no state between calls). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads the body as strict JSON: 415 without a JSON content type, 413 over the limit (chunked bodies
 * are counted as they stream), 400 for invalid UTF-8 or malformed JSON (parsed here, so that the error
 * is the contract's). The text is left in Hono's body cache, where the route's zod validator reads it, and
 * kept for the idempotency hash.
 */
export const readJsonBody =
  (limit = MAX_JSON_BODY_BYTES): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const mediaType = (c.req.header('Content-Type') ?? '').split(';')[0]!.trim();
    if (!JSON_MEDIA_TYPE.test(mediaType)) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type: expected application/json');
    }
    const bytes = await readCapped(c, limit);
    let text: string;
    try {
      text = STRICT_UTF8.decode(bytes);
      JSON.parse(text);
    } catch {
      throw new ApiError('INVALID_INPUT', 'body: expected a valid JSON document');
    }
    // Hono's `c.req.json()` (the zod validator's) parses the cached text; nothing in Hono reads a cached
    // value. The cache holds promises at run time, though its type names the values.
    c.req.bodyCache.text = Promise.resolve(text) as unknown as string;
    c.set('jsonBody', text);
    await next();
  };

/** The body's bytes, or 413 once more than `limit` arrived (declared or streamed). */
export async function readCapped(c: Context, limit: number): Promise<Uint8Array> {
  const declared = c.req.header('Content-Length');
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  // A declared length within the limit frames the body: one native read instead of a chunk loop (the
  // length is checked again in case a runtime let more through).
  const bytes =
    declared !== undefined && /^\d+$/.test(declared)
      ? new Uint8Array(await c.req.raw.arrayBuffer())
      : await readAtMost(c.req.raw.body, limit);
  if (!bytes || bytes.byteLength > limit) throw tooLarge(limit);
  return bytes;
}

const tooLarge = (limit: number) => new ApiError('PAYLOAD_TOO_LARGE', `body: larger than ${limit} bytes`);

/**
 * On routes with attachments the body may be larger, but only by the attachments' base64 `content`:
 * everything else keeps the 512 KiB limit of every other body.
 */
export function checkContentSize(jsonBody: string, attachmentContent: number): void {
  if (jsonBody.length <= MAX_JSON_BODY_BYTES) return;
  const bytes = new TextEncoder().encode(jsonBody).length;
  if (bytes - attachmentContent > MAX_JSON_BODY_BYTES) {
    throw new ApiError(
      'PAYLOAD_TOO_LARGE',
      `body: larger than ${MAX_JSON_BODY_BYTES} bytes besides the attachments' content`,
    );
  }
}

/** `emails[3].attachments[0].filename`: list positions in brackets, object keys joined with dots. */
export function describePath(path: PropertyKey[]): string {
  if (path.length === 0) return 'body';
  return path.reduce<string>((out, key, index) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    return index === 0 ? String(key) : `${out}.${String(key)}`;
  }, '');
}

/** Turns a zod failure into one 400 INVALID_INPUT naming the first offending field (all of them in details). */
export function invalidInput(error: z.core.$ZodError): ApiError {
  const details = error.issues.map((issue) => ({ path: describePath(issue.path), message: issue.message }));
  const first = details[0]!;
  return new ApiError('INVALID_INPUT', `${first.path}: ${first.message}`, { details });
}

const MAX_NAME_SHOWN = 64;

/** A query parameter's name as an error shows it: an empty one quoted, a long one cut. */
const shownName = (name: string) =>
  name === '' ? '""' : name.length > MAX_NAME_SHOWN ? `${name.slice(0, MAX_NAME_SHOWN)}…` : name;

/**
 * Refuses query parameters the route does not declare, and a declared one given more than once (none is a
 * list), as unknown body fields are refused: a typo'd filter must not pass silently as "no filter".
 */
export const declaredQueryOnly =
  (declared: readonly string[]): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    if (!c.req.url.includes('?')) return next();
    const details: { path: string; message: string }[] = [];
    const query = new URL(c.req.url).searchParams;
    for (const name of new Set(query.keys())) {
      if (!declared.includes(name)) details.push({ path: shownName(name), message: 'unknown query parameter' });
      else if (query.getAll(name).length > 1) details.push({ path: name, message: 'given more than once' });
    }
    const first = details[0];
    if (first) throw new ApiError('INVALID_INPUT', `${first.path}: ${first.message}`, { details });
    await next();
  };

/** An optional query integer: digits only, within bounds. Documented as the integer it is. */
export const optionalQueryInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .openapi({ type: 'integer', minimum: min, maximum: max });

/** Query integers: digits only, within bounds; absent → default. */
export const queryInt = (min: number, max: number, fallback: number) =>
  optionalQueryInt(min, max)
    .transform((value) => value ?? fallback)
    .openapi({ type: 'integer', minimum: min, maximum: max, default: fallback });
