// DKIM signatures (src/mail/dkim.ts) checked by a verifier postcode did not write (mailauth, in Node:
// test/support/node/dkim-verifier.ts), on messages as src/mail/mime.ts writes them.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { toBase64 } from '../../src/base64';
import { bodyHash, type DkimKey, dkimSignature, relaxedHeader } from '../../src/mail/dkim';
import { dkimRecordValue } from '../../src/mail/dkim-keys';
import { messageChunks } from '../../src/mail/mime';
import type { OutgoingMail } from '../../src/mail/outgoing';

const DOMAIN = 'shop.example';
const SELECTOR = 'pc2026';

async function newKey(): Promise<{ key: DkimKey; record: string }> {
  const pair = (await crypto.subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  const spki = (await crypto.subtle.exportKey('spki', pair.publicKey)) as ArrayBuffer;
  return {
    key: { domain: DOMAIN, selector: SELECTOR, privateKey: pair.privateKey },
    record: dkimRecordValue(toBase64(spki)),
  };
}

/** The message as it goes over the wire, without SMTP's dot-stuffing and final dot: header block and body. */
async function written(mail: OutgoingMail) {
  let data = '';
  for await (const chunk of messageChunks(mail, [])) data += chunk;
  const message = data.slice(0, -'.\r\n'.length).replaceAll('\r\n..', '\r\n.');
  const split = message.indexOf('\r\n\r\n');
  return { headers: message.slice(0, split + 2), body: message.slice(split + 4) };
}

/** `text` in chunks of 1, 2, 3… characters: lines and CRLFs cut anywhere. */
function* pieces(text: string) {
  for (let at = 0, size = 1; at < text.length; at += size, size = (size % 97) + 1) yield text.slice(at, at + size);
}

async function verified(message: string, record: string) {
  const res = await fetch(`${env.DKIM_VERIFIER_URL}/verify`, {
    method: 'POST',
    body: JSON.stringify({ message, records: { [`${SELECTOR}._domainkey.${DOMAIN}`]: record } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { results: { result: string; domain: string }[] }).results;
}

async function signed(mail: OutgoingMail, key: DkimKey) {
  const { headers, body } = await written(mail);
  const signature = await dkimSignature(key, headers, await bodyHash(pieces(body)));
  return { signature, headers, body, message: `${signature}\r\n${headers}\r\n${body}` };
}

const MAIL: OutgoingMail = {
  from: { email: `orders@${DOMAIN}`, name: 'Shop' },
  to: ['ada@example.com'],
  cc: ['grace@example.com'],
  replyTo: ['help@shop.example'],
  subject: 'Your receipt',
  html: '<p>Thanks for your order.</p>',
  text: 'Thanks for your order.\r\n\r\n.A line that starts with a dot\r\n',
  messageId: `<em_dkimtest@${DOMAIN}>`,
  headers: { 'X-Entity-Ref-ID': 'order-42' },
};

describe('DKIM signatures, checked by mailauth', () => {
  it('pass for a message with html and text, cc, reply-to and a custom header; the body hashed in pieces', async () => {
    const { key, record } = await newKey();
    const { signature, message } = await signed(MAIL, key);
    expect(signature).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=shop\.example;/);
    expect(signature).toContain('h=from:from:to:cc:subject:date:message-id:reply-to:mime-version:content-type;');
    expect(await verified(message, record)).toMatchObject([{ result: 'pass', domain: DOMAIN }]);
  });

  it('pass for a long UTF-8 subject folded over lines, and for a plain-text message', async () => {
    const { key, record } = await newKey();
    const subject = `Grüße aus Köln ✓ ${'lange Betreffzeile '.repeat(50)}`.slice(0, 998);
    const { message } = await signed({ ...MAIL, subject, html: null }, key);
    expect(await verified(message, record)).toMatchObject([{ result: 'pass' }]);
  });

  it('fail when one byte of the body or a signed header changes after signing', async () => {
    const { key, record } = await newKey();
    const { signature, headers, body } = await signed(MAIL, key);
    const changedBody = body.replace('Thanks', 'Thanks!');
    expect(await verified(`${signature}\r\n${headers}\r\n${changedBody}`, record)).toMatchObject([{ result: 'fail' }]);
    const changedSubject = headers.replace('Subject: Your receipt', 'Subject: Your receipt.');
    expect(await verified(`${signature}\r\n${changedSubject}\r\n${body}`, record)).toMatchObject([{ result: 'fail' }]);
  });

  it('fail when a second From is added (From is signed once more than it appears)', async () => {
    const { key, record } = await newKey();
    const { signature, headers, body } = await signed(MAIL, key);
    const message = `${signature}\r\nFrom: someone@else.example\r\n${headers}\r\n${body}`;
    expect((await verified(message, record))[0]!.result).not.toBe('pass');
  });
});

describe('DKIM canonicalization (RFC 6376 3.4)', () => {
  it('relaxed headers: lower-case name, unfolded value, one space for each run, none at the ends', () => {
    expect(relaxedHeader('Subject', ' A  \t b\r\n  c  ')).toBe('subject:A b c');
  });

  it('relaxed body: the same hash whatever the trailing spaces, runs of spaces and empty lines at the end', async () => {
    const plain = await bodyHash(['a b\r\nc\r\n']);
    expect(await bodyHash(['a  \t b  \r\nc\r\n\r\n\r\n'])).toBe(plain);
    expect(await bodyHash(['a b\r', '\nc'])).toBe(plain);
    expect(await bodyHash(['a b\r\nd\r\n'])).not.toBe(plain);
    // An empty body hashes as nothing at all (not as one CRLF) under relaxed canonicalization.
    expect(await bodyHash([])).toBe(await bodyHash(['\r\n\r\n']));
  });

  it('relaxed body: empty lines inside the body are kept wherever the chunks split them', async () => {
    const whole = await bodyHash(['a\r\n\r\n\r\nb \r\n\r\n']);
    expect(await bodyHash(['a\r\n\r\n', '\r\nb', ' \r\n', '\r\n'])).toBe(whole);
    expect(await bodyHash(['a\r\n', '\r\n', '\r', '\nb \r\n'])).toBe(whole);
    expect(await bodyHash(['a\r\n\r\nb\r\n'])).not.toBe(whole);
    // The hash of the canonical body itself, computed without the streaming code.
    const reference = await crypto.subtle.digest('SHA-256', new TextEncoder().encode('a\r\n\r\n\r\nb\r\n'));
    expect(whole).toBe(toBase64(reference));
  });
});
