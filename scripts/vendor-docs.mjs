#!/usr/bin/env node
// postinstall: the Scalar API reference bundle, gzipped, for the Worker to serve at /vendor/scalar/standalone.js
// (a Data module, see wrangler.toml [[rules]]), so /docs works offline (no CDN at run time). It is not a static
// asset: a Worker with assets passes every request through the assets router first, also the API's. The
// file is generated, not committed.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'node_modules/@scalar/api-reference/dist/browser/standalone.js');
const target = join(root, 'vendor/scalar/standalone.js.gz');
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, gzipSync(readFileSync(source), { level: 9 }));
console.log(`[postcode] wrote the API reference bundle to ${target.slice(root.length + 1)}`);
