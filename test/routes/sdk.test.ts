// The <postcode-otp> element as the Worker serves it (issue: "`<postcode-otp>`"): the current file, its
// content-hashed copy cached for good, and the manifest with the SRI value; open to every origin. How it behaves in
// a browser: test/e2e/otp-element.test.ts.
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { toBase64 } from '../../src/base64';
import { call, expectError } from '../support/api';

type Manifest = {
  files: { 'otp.js': { file: string; path: string; integrity: string; bytes: number; gzipBytes: number } };
};

const get = (path: string, headers: Record<string, string> = {}) =>
  exports.default.fetch(new Request(`http://postcode.test${path}`, { headers }));

const manifest = async () => (await (await get('/sdk/v1/manifest.json')).json()) as Manifest;

describe('GET /sdk/v1/otp.js', () => {
  it('an ES module defining <postcode-otp>, open to any origin, cached for 5 minutes, gzipped when taken', async () => {
    const res = await get('/sdk/v1/otp.js', { 'Accept-Encoding': 'gzip', Origin: 'https://shop.example' });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
    expect(res.headers.get('Cache-Control')).toBe('public, max-age=300');
    expect(res.headers.get('Content-Encoding')).toBe('gzip');
    const source = await res.text();
    expect(source).toContain("customElements.define('postcode-otp'");
    expect(source).toContain('static formAssociated = true');
    expect(source).not.toMatch(/^import\s/m); // no dependencies
    const plain = await get('/sdk/v1/otp.js');
    expect(plain.headers.get('Content-Encoding')).toBeNull();
    expect(await plain.text()).toBe(source);
  });

  it('is at most 12 KiB gzipped (the size is printed)', async () => {
    const { bytes, gzipBytes } = (await manifest()).files['otp.js'];
    // The runtime's own gzip of the served file, beside the install's (level 9) that goes on the wire.
    const served = (await get('/sdk/v1/otp.js')).body!.pipeThrough(new CompressionStream('gzip'));
    const runtimeGzip = (await new Response(served).arrayBuffer()).byteLength;
    console.log(
      `<postcode-otp>: ${bytes} bytes, ${gzipBytes} gzipped (${runtimeGzip} at the runtime's level); 12 KiB = 12288`,
    );
    expect(gzipBytes).toBeLessThanOrEqual(12 * 1024);
    expect(runtimeGzip).toBeLessThanOrEqual(12 * 1024);
  });
});

describe('GET /sdk/v1/manifest.json and the hashed file', () => {
  it("names the content-hashed file, whose bytes match the manifest's SRI value and the current file's", async () => {
    const { files } = await manifest();
    const entry = files['otp.js'];
    expect(entry.file).toMatch(/^otp\.[0-9a-f]{16}\.js$/);
    expect(entry.path).toBe(`/sdk/v1/${entry.file}`);
    const hashed = await get(entry.path);
    expect(hashed.status).toBe(200);
    expect(hashed.headers.get('Cache-Control')).toBe('public, max-age=31536000, immutable');
    expect(hashed.headers.get('Access-Control-Allow-Origin')).toBe('*');
    const bytes = new Uint8Array(await hashed.arrayBuffer());
    expect(bytes.byteLength).toBe(entry.bytes);
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-384', bytes));
    expect(entry.integrity).toBe(`sha384-${toBase64(digest)}`);
    expect(new TextDecoder().decode(bytes)).toBe(await (await get('/sdk/v1/otp.js')).text());
  });

  it('another name under /sdk/v1 → 404 NOT_FOUND in the JSON envelope', async () => {
    for (const path of ['/sdk/v1/otp.0000000000000000.js', '/sdk/v1/other.js', '/sdk/v1/otp.js.gz']) {
      expectError(await call('GET', path), 404, 'NOT_FOUND');
    }
  });
});
