// Reading a request's body: strict JSON within a size limit, before any route's validator sees it.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env';
import { ApiError } from '../errors';
import { readAtMost } from '../streams';

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
