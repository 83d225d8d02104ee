// The JSON body reader every route with a body runs before its zod validator: what it leaves for the
// validator and the idempotency hash, and its limits on declared and streamed bodies.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../src/env';
import { ApiError } from '../../src/errors';
import { readJsonBody } from '../../src/middleware/json-body';

/** A route behind readJsonBody(limit) that answers what a validator and the idempotency hash would see. */
function appWith(limit: number) {
  const app = new Hono<AppEnv>();
  app.post('/', readJsonBody(limit), async (c) => {
    const cachedText = await c.req.bodyCache.text;
    return c.json({ cachedText, viaJson: await c.req.json(), jsonBody: c.var.jsonBody });
  });
  app.onError((error, c) =>
    error instanceof ApiError ? c.json({ code: error.code }, error.status) : c.json({ code: 'INTERNAL' }, 500),
  );
  return app;
}

const post = (app: Hono<AppEnv>, body: BodyInit, headers: Record<string, string> = {}) =>
  app.request('/', { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });

describe('readJsonBody', () => {
  it("leaves the body's text in Hono's cache, so c.req.json() parses it without serialising it again", async () => {
    const text = '{"to":"ada@example.com","n":[1,2]}';
    const res = await post(appWith(1024), text, { 'Content-Length': String(text.length) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ cachedText: text, viaJson: JSON.parse(text), jsonBody: text });
  });

  it('reads a streamed body (no Content-Length) the same way', async () => {
    const bytes = new TextEncoder().encode('{"a":"ü"}');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 6));
        controller.enqueue(bytes.slice(6));
        controller.close();
      },
    });
    const res = await post(appWith(1024), stream);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ viaJson: { a: 'ü' }, jsonBody: '{"a":"ü"}' });
  });

  it('413 when the declared or the streamed length passes the limit', async () => {
    const body = JSON.stringify({ pad: 'x'.repeat(100) });
    expect((await post(appWith(50), body, { 'Content-Length': String(body.length) })).status).toBe(413);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body));
        controller.close();
      },
    });
    expect((await post(appWith(50), stream)).status).toBe(413);
  });

  it('400 for invalid UTF-8, and the next body still decodes (the shared decoder keeps no state)', async () => {
    const app = appWith(1024);
    const invalid = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d]); // {"a":"\xC3"}
    const refused = await post(app, invalid, { 'Content-Length': String(invalid.length) });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ code: 'INVALID_INPUT' });
    const ok = await post(app, '{"a":"é"}');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ viaJson: { a: 'é' } });
  });

  it('415 without a JSON content type', async () => {
    const res = await appWith(1024).request('/', {
      method: 'POST',
      body: '{}',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(res.status).toBe(415);
  });
});
