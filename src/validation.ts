import type { Context, ValidationTargets } from 'hono';
import { zValidator } from '@hono/zod-validator';
import { z, type ZodType } from 'zod';
import type { AppEnv } from './env';
import { ApiError } from './errors';

export const MAX_JSON_BODY_BYTES = 512 * 1024;

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Reads the body as strict JSON: 415 without a JSON content type, 413 over the limit (chunked bodies
 * are counted as they stream), 400 for invalid UTF-8 or malformed JSON. The parsed value is left in
 * Hono's body cache, where the zod validator picks it up.
 */
async function readJsonBody(c: Context<AppEnv>): Promise<void> {
  const mediaType = (c.req.header('Content-Type') ?? '').split(';')[0]!.trim();
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type: expected application/json');
  }
  const declared = c.req.header('Content-Length');
  if (declared !== undefined && Number(declared) > MAX_JSON_BODY_BYTES) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (c.req.raw.body) {
    const reader = c.req.raw.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_JSON_BODY_BYTES) {
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  const bytes = chunks.length === 1 ? chunks[0]! : concat(chunks, size);
  let text: string;
  let parsed: unknown;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError('INVALID_INPUT', 'body: expected a valid JSON document');
  }
  c.req.bodyCache.json = Promise.resolve(parsed);
  c.set('jsonBody', text);
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

const tooLarge = () => new ApiError('PAYLOAD_TOO_LARGE', `body: larger than ${MAX_JSON_BODY_BYTES} bytes`);

function describePath(path: PropertyKey[]): string {
  return path.length === 0 ? 'body' : path.map(String).join('.');
}

/** Turns a zod failure into one 400 INVALID_INPUT naming the first offending field (all of them in details). */
export function invalidInput(error: z.core.$ZodError): ApiError {
  const details = error.issues.map((issue) => ({ path: describePath(issue.path), message: issue.message }));
  const first = details[0]!;
  return new ApiError('INVALID_INPUT', `${first.path}: ${first.message}`, { details });
}

/** The one validation wrapper: zod through @hono/zod-validator, failures thrown as ApiError. */
export function validate<Target extends keyof ValidationTargets, Schema extends ZodType>(target: Target, schema: Schema) {
  const validator = zValidator(target, schema, (result) => {
    if (!result.success) throw invalidInput(result.error);
  });
  if (target !== 'json') return validator;
  const withBody: typeof validator = async (c, next) => {
    // The validator is typed for any Env; every route of this app runs with AppEnv.
    await readJsonBody(c as unknown as Context<AppEnv>);
    return validator(c, next);
  };
  return withBody;
}

/** Query integers: digits only, within bounds; absent → default. */
export const queryInt = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .transform((value) => value ?? fallback);
