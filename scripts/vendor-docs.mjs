#!/usr/bin/env node
// postinstall: copy the Scalar API reference bundle into the Worker's static assets, so /docs works
// offline (no CDN at run time). public/vendor is generated, not committed.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'node_modules/@scalar/api-reference/dist/browser/standalone.js');
const target = join(root, 'public/vendor/scalar/standalone.js');
mkdirSync(dirname(target), { recursive: true });
copyFileSync(source, target);
console.log(`[postcode] copied the API reference bundle to ${target.slice(root.length + 1)}`);
