#!/usr/bin/env node
// The browser element the Worker serves at /sdk/v1/otp.js (browser/postcode-otp.js), gzipped as a Data module
// (wrangler.toml [[rules]]) with its content hash and SRI value beside it. Runs at install, before `npm start` and
// before the tests; the output (vendor/sdk) is generated, not committed.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Writes vendor/sdk/otp.js.gz and vendor/sdk/otp.json; returns what the JSON says. */
export function buildBrowser() {
  const source = readFileSync(join(root, 'browser/postcode-otp.js'));
  const gzipped = gzipSync(source, { level: 9 });
  const meta = {
    hash: createHash('sha256').update(source).digest('hex').slice(0, 16),
    integrity: `sha384-${createHash('sha384').update(source).digest('base64')}`,
    bytes: source.length,
    gzipBytes: gzipped.length,
  };
  const target = join(root, 'vendor/sdk');
  mkdirSync(target, { recursive: true });
  writeFileSync(join(target, 'otp.js.gz'), gzipped);
  writeFileSync(join(target, 'otp.json'), `${JSON.stringify(meta, null, 2)}\n`);
  return meta;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { bytes, gzipBytes } = buildBrowser();
  console.log(`[postcode] wrote vendor/sdk/otp.js.gz (${bytes} bytes, ${gzipBytes} gzipped)`);
}
