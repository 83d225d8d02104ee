// Cross-cutting behaviour: envelope, request ids, unknown routes and methods, body rules.
import { describe, expect, it } from 'vitest';
import { MAX_ATTACHMENT_BODY_BYTES } from '../src/middleware/json-body';
import { call, expectError, newAccount, uniqueAddress } from './support/api';

describe('GET / and GET /health', () => {
  it('names the service and carries a request id', async () => {
    const res = await call('GET', '/');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, data: { service: 'postcode' } });
    expect(res.headers.get('X-Request-Id')).toMatch(/^req_[a-z2-7]{20}$/);
  });

  it('answers the health probe', async () => {
    const res = await call('GET', '/health');
    expect(res.json).toEqual({ success: true, data: { status: 'ok' } });
  });
});

describe('unknown routes and methods', () => {
  it('404 NOT_FOUND in the envelope, with a request id', async () => {
    const res = await call('GET', '/api/v1/nope');
    expectError(res, 404, 'NOT_FOUND');
    expect(res.headers.get('X-Request-Id')).toMatch(/^req_/);
  });

  it('405 METHOD_NOT_ALLOWED with Allow on a known path', async () => {
    const res = await call('PATCH', '/api/v1/emails');
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('Allow')).toContain('POST');
    expect(res.headers.get('Allow')).toContain('GET');
  });

  it('405 for a path with a parameter', async () => {
    expectError(await call('POST', '/api/v1/templates/tpl_abcdef'), 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('JSON bodies', () => {
  const path = '/api/v1/emails';
  const valid = () => ({ to: uniqueAddress(), subject: 'hi', text: 'hello' });

  it('415 without Content-Type: application/json', async () => {
    const { mailKey } = await newAccount();
    const res = await call('POST', path, { token: mailKey, rawBody: JSON.stringify(valid()) });
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const plain = await call('POST', path, {
      token: mailKey,
      rawBody: JSON.stringify(valid()),
      headers: { 'Content-Type': 'text/plain' },
    });
    expectError(plain, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('accepts application/json with a charset parameter', async () => {
    const { mailKey } = await newAccount();
    const res = await call('POST', path, {
      token: mailKey,
      rawBody: JSON.stringify(valid()),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(200);
  });

  it('400 INVALID_INPUT for malformed JSON, invalid UTF-8 and an empty body', async () => {
    const { mailKey } = await newAccount();
    const headers = { 'Content-Type': 'application/json' };
    expectError(await call('POST', path, { token: mailKey, rawBody: '{"to": ', headers }), 400, 'INVALID_INPUT');
    const badUtf8 = new Uint8Array([0x7b, 0x22, 0x74, 0x6f, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    expectError(await call('POST', path, { token: mailKey, rawBody: badUtf8, headers }), 400, 'INVALID_INPUT');
    expectError(await call('POST', path, { token: mailKey, rawBody: '', headers }), 400, 'INVALID_INPUT');
    expectError(await call('POST', path, { token: mailKey, rawBody: '[1,2]', headers }), 400, 'INVALID_INPUT');
  });

  it('413 PAYLOAD_TOO_LARGE over 512 KiB, with Content-Length', async () => {
    const { mailKey } = await newAccount();
    const body = { ...valid(), text: 'x'.repeat(512 * 1024) };
    expectError(await call('POST', path, { token: mailKey, body }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('413 PAYLOAD_TOO_LARGE for a chunked body without Content-Length', async () => {
    const { mailKey } = await newAccount();
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"to":"a@example.com","subject":"s","text":"'));
        // Route 1 takes attachments: its limit is MAX_ATTACHMENT_BODY_BYTES.
        if (sent++ < MAX_ATTACHMENT_BODY_BYTES / chunk.length) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await call('POST', path, {
      token: mailKey,
      rawBody: stream,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a body just under the limit is accepted', async () => {
    const { mailKey } = await newAccount();
    const body = { ...valid(), text: 'x'.repeat(500 * 1024) };
    expect((await call('POST', path, { token: mailKey, body })).status).toBe(200);
  });

  it('authentication is checked before the body (401 beats 415 and 400)', async () => {
    expectError(await call('POST', path, { rawBody: 'not json' }), 401, 'UNAUTHORIZED');
  });
});
