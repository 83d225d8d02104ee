// DKIM signatures (RFC 6376): rsa-sha256, relaxed canonicalization of headers and body. The body is hashed
// as it streams (Workers' DigestStream), so a large message is never held whole to be signed.
import { toBase64 } from '../base64';

/** A domain's signing key: `d=`, `s=` and the imported private key (RSASSA-PKCS1-v1_5, SHA-256). */
export type DkimKey = { domain: string; selector: string; privateKey: CryptoKey };

/** The headers signed when present, From twice so that a second From cannot be added (RFC 6376 8.15). */
export const SIGNED_HEADERS = [
  'from',
  'from',
  'to',
  'cc',
  'subject',
  'date',
  'message-id',
  'reply-to',
  'mime-version',
  'content-type',
  'content-language',
  'list-unsubscribe',
  'list-unsubscribe-post',
] as const;

const encoder = new TextEncoder();

/** Relaxed header canonicalization (RFC 6376 3.4.2): lower-case name, unfolded value, runs of space as one. */
export function relaxedHeader(name: string, value: string): string {
  const unfolded = value.replace(/\r\n(?=[ \t])/g, '').replace(/[ \t]+/g, ' ');
  return `${name.trim().toLowerCase()}:${unfolded.trim()}`;
}

/** A header block (`Name: value` lines, continuation lines folded in) as fields in order. */
export function headerFields(block: string): { name: string; value: string }[] {
  const fields: { name: string; value: string }[] = [];
  for (const line of block.replace(/\r\n$/, '').split('\r\n')) {
    const last = fields.at(-1);
    if (/^[ \t]/.test(line) && last) last.value += `\r\n${line}`;
    else {
      const colon = line.indexOf(':');
      if (colon > 0) fields.push({ name: line.slice(0, colon), value: line.slice(colon + 1) });
    }
  }
  return fields;
}

/**
 * The relaxed body hash (RFC 6376 3.4.4 and 3.7), base64, of a body given in chunks of any size: spaces at a
 * line's end dropped, runs of spaces as one, empty lines at the end dropped, a body ending in CRLF. Each chunk's
 * whole lines are canonicalized at once (a regular expression over the chunk, not one per line).
 */
export async function bodyHash(chunks: AsyncIterable<string> | Iterable<string>): Promise<string> {
  const digest = new crypto.DigestStream('SHA-256');
  const writer = digest.getWriter();
  let partial = '';
  // Empty lines seen after the last line with content: written only if content follows them.
  let emptyLines = 0;
  const relax = (lines: string) => lines.replace(/[ \t]+/g, ' ').replace(/ \r\n/g, '\r\n');
  const write = async (canonical: string) => {
    let end = canonical.length;
    while (end >= 2 && canonical.startsWith('\r\n', end - 2)) end -= 2;
    // `canonical` is whole lines: those past `end` are empty (the CRLF at `end` closes the last with content).
    const trailing = (canonical.length - end) / 2;
    if (end === 0) {
      emptyLines += trailing;
      return;
    }
    await writer.write(encoder.encode(`${'\r\n'.repeat(emptyLines)}${canonical.slice(0, end + 2)}`));
    emptyLines = trailing - 1;
  };
  for await (const chunk of chunks) {
    const text = partial + chunk;
    const lastBreak = text.lastIndexOf('\r\n');
    const cut = lastBreak < 0 ? 0 : lastBreak + 2;
    partial = text.slice(cut);
    if (cut > 0) await write(relax(text.slice(0, cut)));
  }
  const last = relax(`${partial}\r\n`);
  if (last !== '\r\n') await write(last);
  await writer.close();
  return toBase64(await digest.digest);
}

/** `DKIM-Signature` folded at its tags so that no line is long; `b=` last, on a line of its own. */
function foldTags(tags: string[]): string {
  let out = 'DKIM-Signature:';
  let length = out.length;
  for (const tag of tags) {
    if (length + tag.length + 2 > 76) {
      out += '\r\n ';
      length = 1;
    } else {
      out += ' ';
      length += 1;
    }
    out += `${tag};`;
    length += tag.length + 1;
  }
  return out;
}

/**
 * The `DKIM-Signature` header field (without its line end) for a message with this header block and body
 * hash: the signed fields are those of SIGNED_HEADERS present in `headerBlock` (From once more than present).
 */
export async function dkimSignature(key: DkimKey, headerBlock: string, bodyHashBase64: string, now = new Date()) {
  const fields = headerFields(headerBlock);
  // Each name signs its fields from the bottom up (RFC 6376 5.4.2); a name listed more often than present signs
  // the empty string, so that nobody can add one.
  const remaining = new Map<string, { name: string; value: string }[]>();
  for (const field of fields) {
    const name = field.name.trim().toLowerCase();
    remaining.set(name, [...(remaining.get(name) ?? []), field]);
  }
  const present = new Set(remaining.keys());
  const signed = SIGNED_HEADERS.filter((name) => present.has(name));
  let input = '';
  for (const name of signed) {
    const field = remaining.get(name)?.pop();
    if (field) input += `${relaxedHeader(field.name, field.value)}\r\n`;
  }
  const tags = [
    'v=1',
    'a=rsa-sha256',
    'c=relaxed/relaxed',
    `d=${key.domain}`,
    `s=${key.selector}`,
    `t=${Math.floor(now.getTime() / 1000)}`,
    `h=${signed.join(':')}`,
    `bh=${bodyHashBase64}`,
  ];
  const unsigned = `${foldTags(tags)}\r\n b=`;
  input += relaxedHeader('DKIM-Signature', unsigned.slice('DKIM-Signature:'.length));
  const signature = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key.privateKey, encoder.encode(input));
  return `${unsigned}${toBase64(signature)}`;
}
