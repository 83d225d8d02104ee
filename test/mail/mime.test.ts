// The DATA payload postcode writes (src/mail/mime.ts): structure, line rules, encodings, streamed attachments.
import { describe, expect, it } from 'vitest';
import { messageChunks } from '../../src/mail/mime';
import type { OutgoingAttachment, OutgoingMail } from '../../src/mail/outgoing';
import { quotedPrintable } from '../../src/mail/quoted-printable';

const BASE: OutgoingMail = {
  from: { email: 'from@example.com', name: 'Sender' },
  to: ['ada@example.com'],
  subject: 'Hello',
  html: null,
  text: 'Hi',
  messageId: '<em_test@example.com>',
};

/** A stream of `bytes` in chunks of the given sizes (cycled), as R2 or fetch would hand it over. */
function chunked(bytes: Uint8Array, sizes: number[]): ReadableStream<Uint8Array> {
  let offset = 0;
  let turn = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      const size = sizes[turn++ % sizes.length]!;
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

const file = (filename: string, contentType: string, contentId: string | null = null): OutgoingAttachment => ({
  filename,
  contentType,
  contentId,
  size: 0,
  open: async () => null, // messageChunks takes opened contents; open() is the SMTP layer's business
});

async function payload(mail: OutgoingMail, contents: ReadableStream<Uint8Array>[] = []): Promise<string> {
  let out = '';
  for await (const chunk of messageChunks(mail, contents)) out += chunk;
  return out;
}

/** Decodes quoted-printable (soft breaks joined, =XX as bytes) back to text. */
function decodeQp(encoded: string): string {
  const joined = encoded.replace(/=\r\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    if (joined[i] === '=') {
      bytes.push(Number.parseInt(joined.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(joined.charCodeAt(i));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

const headerBlock = (raw: string) => raw.slice(0, raw.indexOf('\r\n\r\n'));
const lines = (raw: string) => raw.split('\r\n');

describe('quotedPrintable', () => {
  const samples = [
    'plain text',
    `${'long line without breaks '.repeat(20)}end`,
    'trailing space \nand tab\t\nend',
    '.starts with a dot\n.\n..two',
    'Grüße, 日本語, emoji 👩‍💻 and = signs',
    `${'x'.repeat(74)}.dot after a soft break`,
    'crlf\r\nand cr\rand lf\n',
  ];

  it.each(samples)('round-trips %j with lines ≤ 76 and no line starting with "."', (text) => {
    const encoded = quotedPrintable(text);
    for (const line of lines(encoded)) {
      expect(line.length).toBeLessThanOrEqual(76);
      expect(line.startsWith('.')).toBe(false);
      expect(line).not.toMatch(/[ \t]$/);
      expect(line).toMatch(/^[\x20-\x7e]*$/);
    }
    expect(decodeQp(encoded)).toBe(text.replace(/\r\n|\r/g, '\n').replace(/\n/g, '\r\n'));
  });
});

describe('messageChunks', () => {
  it('text only: one text/plain part, the headers postcode writes, and the terminating dot', async () => {
    const raw = await payload({ ...BASE, cc: ['cc@example.com'], replyTo: ['help@example.com'] });
    const head = headerBlock(raw);
    expect(head).toMatch(/^From: "Sender" <from@example.com>\r\n/);
    expect(head).toContain('\r\nTo: ada@example.com\r\n');
    expect(head).toContain('\r\nCc: cc@example.com\r\n');
    expect(head).toContain('\r\nReply-To: help@example.com\r\n');
    expect(head).toContain('\r\nMessage-ID: <em_test@example.com>\r\n');
    expect(head).toContain('\r\nMIME-Version: 1.0\r\n');
    expect(head).toMatch(/\r\nDate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\r\n/);
    expect(head).toContain('Content-Type: text/plain; charset=utf-8');
    expect(head).not.toMatch(/^Bcc:/im);
    expect(raw.endsWith('\r\n.\r\n')).toBe(true);
  });

  it('no To recipients (only cc/bcc): the To header says so instead of naming the envelope', async () => {
    const head = headerBlock(await payload({ ...BASE, to: [], cc: ['cc@example.com'] }));
    expect(head).toContain('\r\nTo: undisclosed-recipients:;\r\n');
  });

  it('text and html: multipart/alternative with both', async () => {
    const raw = await payload({ ...BASE, html: '<p>Hi</p>' });
    expect(headerBlock(raw)).toMatch(/Content-Type: multipart\/alternative;\r\n boundary="pc_[0-9a-f]{32}_0"/);
    expect(raw).toContain('Content-Type: text/plain; charset=utf-8');
    expect(raw).toContain('Content-Type: text/html; charset=utf-8');
  });

  it('custom headers: ASCII kept as written (no encoded words in a URL), non-ASCII encoded', async () => {
    const raw = await payload({
      ...BASE,
      headers: { 'List-Unsubscribe': `<https://example.com/u/${'a'.repeat(100)}>`, 'X-Note': 'Grüße' },
    });
    const head = headerBlock(raw);
    expect(head).toContain(`\r\nList-Unsubscribe: <https://example.com/u/${'a'.repeat(100)}>\r\n`);
    expect(head).toMatch(/\r\nX-Note: =\?UTF-8\?B\?[^?]+\?=/);
  });

  it('attachments: mixed around related around alternative, inline with Content-ID, bytes intact', async () => {
    const pdf = crypto.getRandomValues(new Uint8Array(1000));
    const png = crypto.getRandomValues(new Uint8Array(300));
    const raw = await payload(
      {
        ...BASE,
        html: '<img src="cid:logo">',
        attachments: [file('a.pdf', 'application/pdf'), file('logo.png', 'image/png', 'logo')],
      },
      [chunked(pdf, [333]), chunked(png, [7, 11])],
    );
    expect(headerBlock(raw)).toContain('Content-Type: multipart/mixed;');
    expect(raw).toContain('Content-Type: multipart/related;');
    expect(raw).toContain('Content-Type: multipart/alternative;');
    expect(raw).toContain('Content-Disposition: inline;\r\n filename="logo.png"');
    expect(raw).toContain('Content-ID: <logo>');
    expect(raw).toContain('Content-Disposition: attachment;\r\n filename="a.pdf"');
    const bodyOf = (name: string) => {
      const start = raw.indexOf('\r\n\r\n', raw.indexOf(`filename="${name}"`)) + 4;
      return raw.slice(start, raw.indexOf('\r\n--', start)).replace(/\r\n/g, '');
    };
    expect(atob(bodyOf('a.pdf'))).toBe(String.fromCharCode(...pdf));
    expect(atob(bodyOf('logo.png'))).toBe(String.fromCharCode(...png));
  });

  it('a 1 MiB attachment in odd-sized chunks comes out byte-identical in 76-character lines', async () => {
    const bytes = new Uint8Array(1024 * 1024);
    for (let i = 0; i < bytes.length; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
    const raw = await payload({ ...BASE, attachments: [file('big.bin', 'application/octet-stream')] }, [
      chunked(bytes, [1, 4095, 65_537, 57, 100_003]),
    ]);
    const start = raw.indexOf('\r\n\r\n', raw.indexOf('filename="big.bin"')) + 4;
    const base64 = raw.slice(start, raw.indexOf('\r\n--', start));
    const base64Lines = lines(base64);
    expect(base64Lines.slice(0, -1).every((line) => line.length === 76)).toBe(true);
    const decoded = atob(base64.replace(/\r\n/g, ''));
    expect(decoded.length).toBe(bytes.length);
    let same = true;
    for (let i = 0; i < bytes.length && same; i++) same = decoded.charCodeAt(i) === bytes[i];
    expect(same).toBe(true);
  });

  it('file names: non-ASCII, quotes and long names are RFC 2231 encoded, never raw in a header', async () => {
    const names = ['Übersicht März.pdf', 'say "hi".txt', `${'ü'.repeat(200)}.txt`, 'back\\slash.txt'];
    const raw = await payload(
      { ...BASE, attachments: names.map((name) => file(name, 'text/plain')) },
      names.map(() => chunked(new Uint8Array([65]), [1])),
    );
    for (const line of lines(raw)) {
      expect(line).toMatch(/^[\x20-\x7e\t]*$/);
      expect(line.length).toBeLessThanOrEqual(998);
    }
    expect(raw).toContain("filename*0*=UTF-8''%C3%9Cbersicht%20M%C3%A4rz.pdf");
    expect(raw).toContain("filename*0*=UTF-8''say%20%22hi%22.txt");
    expect(raw).toContain('filename*3*=');
  });

  it('every header line stays within 78 characters where it can, and no line starts with "."', async () => {
    const raw = await payload(
      {
        ...BASE,
        to: Array.from({ length: 20 }, (_, i) => `recipient-${i}@example.com`),
        subject: 'A subject that goes on and on, well past the seventy-eight characters a header line should keep to',
        text: '.leading dot\n'.repeat(5),
        attachments: [file('x.txt', 'text/plain')],
      },
      [chunked(new TextEncoder().encode('.hidden'), [3])],
    );
    for (const line of lines(headerBlock(raw))) expect(line.length).toBeLessThanOrEqual(78);
    expect(lines(raw).filter((line) => line.startsWith('.'))).toEqual(['.']);
  });
});
