#!/usr/bin/env node
// `npm run dkim:check -- <recipient>`: checks the DKIM signature of the latest mail to <recipient> in the
// local inbox of `npm start`, with mailauth (a verifier postcode did not write) and the local DNS resolver.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';

const root = resolve(import.meta.dirname, '..');
const stateDir = resolve(root, process.env.POSTCODE_STATE_DIR ?? '.wrangler/state');
const inbox = `http://127.0.0.1:${process.env.POSTCODE_INBOX_PORT ?? 1080}`;
const recipient = process.argv[2]?.toLowerCase();
if (!recipient) {
  console.error('usage: npm run dkim:check -- <recipient address>');
  process.exit(2);
}

const { dnsUrl } = JSON.parse(readFileSync(join(stateDir, 'postcode-ready.json'), 'utf8'));

/** TXT lookups through the local DNS-over-HTTPS resolver, in the form mailauth takes (strings per record). */
async function resolver(name, type) {
  const url = `${dnsUrl}/dns-query?name=${encodeURIComponent(name)}&type=${type}`;
  const answer = await (await fetch(url, { headers: { accept: 'application/dns-json' } })).json();
  const records = (answer.Answer ?? []).map((a) =>
    (a.data.match(/"(?:[^"\\]|\\.)*"/g) ?? []).map((q) => JSON.parse(q)),
  );
  if (records.length === 0) throw Object.assign(new Error(`no ${type} ${name}`), { code: 'ENOTFOUND' });
  return records;
}

const mails = await (await fetch(`${inbox}/email`)).json();
const latest = mails.filter((m) => m.to?.some((to) => to.address.toLowerCase() === recipient)).at(-1);
if (!latest) {
  console.error(`no mail to ${recipient} in the inbox at ${inbox}`);
  process.exit(1);
}
const raw = await (await fetch(`${inbox}/email/${latest.id}/source`)).text();
const { results } = await dkimVerify(Buffer.from(raw), { resolver, strict: true });
if (results.length === 0) console.log(`dkim=none (the mail "${latest.subject}" is not signed)`);
for (const r of results) {
  console.log(
    `dkim=${r.status.result} d=${r.signingDomain} s=${r.selector}${r.status.comment ? ` (${r.status.comment})` : ''}`,
  );
}
process.exit(results.length > 0 && results.every((r) => r.status.result === 'pass') ? 0 : 1);
