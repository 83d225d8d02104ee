#!/usr/bin/env node
// Refreshes data/disposable-email-domains.txt from the disposable-email-domains project (data/README.md): every
// line must be a lower-case domain, and a list much shorter than the one it replaces is refused.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE =
  'https://raw.githubusercontent.com/disposable-email-domains/disposable-email-domains/main/disposable_email_blocklist.conf';
const DOMAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'data/disposable-email-domains.txt');
const url = process.argv[2] ?? SOURCE;

const res = await fetch(url);
if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
const lines = (await res.text()).split(/\r?\n/).map((line) => line.trim().toLowerCase());
const domains = [...new Set(lines.filter((line) => line !== '' && !line.startsWith('#')))].sort();
const bad = domains.filter((domain) => !DOMAIN.test(domain));
if (bad.length > 0) throw new Error(`not domains: ${bad.slice(0, 10).join(', ')}${bad.length > 10 ? ', …' : ''}`);
const before = readFileSync(target, 'utf8')
  .split('\n')
  .filter((line) => line !== '');
if (domains.length < before.length / 2) {
  throw new Error(`${domains.length} domains, fewer than half of the ${before.length} in the list now: not written`);
}
writeFileSync(target, `${domains.join('\n')}\n`);
const old = new Set(before);
const added = domains.filter((domain) => !old.has(domain)).length;
const removed = before.length - (domains.length - added);
console.log(`[postcode] ${target.slice(root.length + 1)}: ${domains.length} domains (+${added}, -${removed})`);
