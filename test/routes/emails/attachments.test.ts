// Attachments on routes 1, 3 and the batch: checked and read when the email is accepted, stored in R2, streamed
// into the message at send time, and deleted once the email is finished.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  call,
  expectError,
  newAccount,
  sendLogTotal,
  uniqueAddress,
  waitForInbox,
  waitForStatus,
} from '../../support/api';
import type { EmailDetail, QueuedEmail } from '../../support/responses';
import { createTemplate } from '../../support/templates';

const queue = (token: string, body: unknown, bindings?: Cloudflare.Env) =>
  call<QueuedEmail>('POST', '/api/v1/emails', { token, body, bindings });

/** The bytes the test file server serves for /files/<n> (test/support/node/file-server.ts). */
function patternBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (31 * i + 7) & 255;
  return bytes;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

const randomBytes = (size: number) => {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 65_536) crypto.getRandomValues(bytes.subarray(i, Math.min(i + 65_536, size)));
  return bytes;
};

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

type Part = { headers: string; body: string };

/** The leaf MIME parts of a raw message (nested multiparts opened), with their header block and body. */
function mimeParts(raw: string): Part[] {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const body = rest.join('\r\n\r\n');
  const boundary = /boundary="([^"]+)"/.exec(head!.replace(/\r\n[ \t]/g, ' '))?.[1];
  if (!boundary || !/content-type:\s*multipart\//i.test(head!)) return [{ headers: head!, body }];
  return body
    .split(`--${boundary}`)
    .slice(1, -1)
    .flatMap((chunk) => mimeParts(chunk.replace(/^\r\n/, '')));
}

const partNamed = (raw: string, filename: string) =>
  mimeParts(raw).find((p) => p.headers.replace(/\r\n[ \t]/g, ' ').includes(`filename="${filename}"`));

const decodePart = (part: Part) => {
  const binary = atob(part.body.replace(/\s+/g, ''));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
};

async function r2Keys(emailId: string): Promise<string[]> {
  return (await env.ATTACHMENTS.list({ prefix: `attachments/${emailId}/` })).objects.map((o) => o.key);
}

describe('POST /api/v1/emails with attachments', () => {
  it('a base64 file and a fetched one arrive byte for byte, and are gone from R2 once SENT', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('attach');
    const pdf = randomBytes(300_000);
    const res = await queue(mailKey, {
      to,
      subject: 'Your invoice',
      text: 'Attached.',
      attachments: [
        { filename: 'invoice.pdf', content: toBase64(pdf) },
        { filename: 'data.bin', path: `${env.FILE_SERVER_URL}/files/70000` },
      ],
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    const invoice = partNamed(mail!.raw, 'invoice.pdf')!;
    expect(invoice.headers).toMatch(/Content-Type: application\/pdf/i);
    expect(invoice.headers).toMatch(/Content-Disposition: attachment/i);
    expect(await sha256(decodePart(invoice))).toBe(await sha256(pdf));
    expect(await sha256(decodePart(partNamed(mail!.raw, 'data.bin')!))).toBe(await sha256(patternBytes(70_000)));
    expect(mail!.text.trim()).toBe('Attached.');
    await waitForStatus(mailKey, res.json.data.id, 'SENT');
    const detail = await call<EmailDetail>('GET', `/api/v1/emails/${res.json.data.id}`, { token: mailKey });
    expect(detail.json.data.attachments).toEqual([
      { filename: 'invoice.pdf', contentType: 'application/pdf', size: 300_000 },
      { filename: 'data.bin', contentType: 'application/octet-stream', size: 70_000 },
    ]);
    expect(await r2Keys(res.json.data.id)).toEqual([]);
  });

  it('an inline image: contentId gives a Content-ID the html refers to with cid:', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('inline');
    const png = randomBytes(2_000);
    const res = await queue(mailKey, {
      to,
      subject: 'Logo',
      html: '<p>Hello <img src="cid:logo@acme"></p>',
      attachments: [{ filename: 'logo.png', content: toBase64(png), contentId: 'logo@acme' }],
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    const logo = partNamed(mail!.raw, 'logo.png')!;
    expect(logo.headers).toMatch(/Content-ID: <logo@acme>/i);
    expect(logo.headers).toMatch(/Content-Disposition: inline/i);
    expect(logo.headers).toMatch(/Content-Type: image\/png/i);
    expect(mail!.raw).toMatch(/Content-Type: multipart\/related/i);
    expect(await sha256(decodePart(logo))).toBe(await sha256(png));
    // mailparser turns cid: references into data: URIs; the html as sent keeps the reference.
    expect(mail!.raw).toContain('src=3D"cid:logo@acme"');
  });

  it('a non-ASCII file name and one with quotes and spaces arrive encoded, never raw in a header', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('names');
    const res = await queue(mailKey, {
      to,
      subject: 'Names',
      text: 'x',
      attachments: [
        { filename: 'Übersicht März.txt', content: btoa('a') },
        { filename: 'say "hi" now.txt', content: btoa('b') },
      ],
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    const headerLines = mimeParts(mail!.raw).flatMap((p) => p.headers.split('\r\n'));
    expect(headerLines.every((line) => /^[\x20-\x7e\t]*$/.test(line))).toBe(true);
    expect(headerLines.some((line) => line.includes('"say "hi" now.txt"'))).toBe(false);
  });

  it('stores the files in R2 and queues only the id: a scheduled email keeps them until canceled', async () => {
    const { accountId, mailKey } = await newAccount();
    const sent: unknown[] = [];
    const queueSpy = { ...env.MAIL_QUEUE, sendBatch: async (messages: unknown[]) => void sent.push(...messages) };
    const file = randomBytes(1_000);
    const res = await queue(
      mailKey,
      {
        to: uniqueAddress('stored'),
        subject: 'Later',
        text: 'x',
        attachments: [{ filename: 'a.bin', content: toBase64(file) }],
      },
      { ...env, MAIL_QUEUE: queueSpy as unknown as Queue },
    );
    expect(res.status).toBe(200);
    const id = res.json.data.id;
    expect(sent).toEqual([{ body: { kind: 'email', accountId, emailId: id }, contentType: 'json' }]);
    const [key] = await r2Keys(id);
    const stored = await env.ATTACHMENTS.get(key!);
    expect(await sha256(new Uint8Array(await stored!.arrayBuffer()))).toBe(await sha256(file));

    const later = await queue(mailKey, {
      to: uniqueAddress('stored'),
      subject: 'Later',
      text: 'x',
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
      attachments: [{ filename: 'a.bin', content: toBase64(file) }],
    });
    expect(await r2Keys(later.json.data.id)).toHaveLength(1);
    expect((await call('POST', `/api/v1/emails/${later.json.data.id}/cancel`, { token: mailKey })).status).toBe(200);
    expect(await r2Keys(later.json.data.id)).toEqual([]);
  });

  it('attachment content may take the body past 512 KiB, nothing else may', async () => {
    const { mailKey } = await newAccount();
    const big = await queue(mailKey, {
      to: uniqueAddress('big'),
      subject: 'Big',
      text: 'x',
      attachments: [{ filename: 'big.bin', content: toBase64(randomBytes(2_500_000)) }],
    });
    expect(big.status).toBe(200);
    const res = await queue(mailKey, {
      to: uniqueAddress('big'),
      subject: 'Big',
      text: 'x'.repeat(600 * 1024),
      attachments: [{ filename: 'small.txt', content: btoa('a') }],
    });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('works on route 3 (template send) too', async () => {
    const { mailKey } = await newAccount();
    const template = await createTemplate(mailKey, { subject: 'Invoice {{n}}', textBody: 'See attached, {{n}}' });
    const to = uniqueAddress('tplattach');
    const res = await call<QueuedEmail>('POST', '/api/v1/templates/send', {
      token: mailKey,
      body: {
        to,
        templateId: template.id,
        vars: { n: 7 },
        attachments: [{ filename: 'i.txt', content: btoa('seven') }],
      },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(new TextDecoder().decode(decodePart(partNamed(mail!.raw, 'i.txt')!))).toBe('seven');
  });
});

describe('attachments: refused input', () => {
  const cases: [string, unknown, string][] = [
    ['an executable', [{ filename: 'setup.exe', content: btoa('MZ') }], 'attachments[0].filename'],
    ['a script, upper case', [{ filename: 'run.JS', content: btoa('x') }], 'attachments[0].filename'],
    ['a double extension', [{ filename: 'invoice.pdf.scr', content: btoa('x') }], 'attachments[0].filename'],
    [
      'a dangerous media type',
      [{ filename: 'a.txt', content: btoa('x'), contentType: 'application/x-msdownload' }],
      'attachments[0].contentType',
    ],
    ['a path in the name', [{ filename: '../../etc/passwd', content: btoa('x') }], 'attachments[0].filename'],
    ['a Windows path', [{ filename: 'C:\\evil\\a.txt', content: btoa('x') }], 'attachments[0].filename'],
    ['a name of dots', [{ filename: '..', content: btoa('x') }], 'attachments[0].filename'],
    ['CR/LF in the name', [{ filename: 'a.txt\r\nBcc: x@example.com', content: btoa('x') }], 'attachments[0].filename'],
    ['an empty name', [{ filename: '', content: btoa('x') }], 'attachments[0].filename'],
    ['bad base64', [{ filename: 'a.txt', content: 'not base64!' }], 'attachments[0].content'],
    // `$(base64 -w0 invoice.pdf)` of a missing file is an empty string: a 0-byte file is refused, not sent.
    ['empty content', [{ filename: 'invoice.pdf', content: '' }], 'attachments[0].content: must not be empty'],
    ['base64 without padding', [{ filename: 'a.txt', content: 'YWJjZA' }], 'attachments[0].content'],
    [
      'both content and path',
      [{ filename: 'a.txt', content: btoa('x'), path: 'https://example.com/a' }],
      'attachments[0].content',
    ],
    ['neither content nor path', [{ filename: 'a.txt' }], 'attachments[0].content'],
    ['a bad contentId', [{ filename: 'a.png', content: btoa('x'), contentId: 'a b>' }], 'attachments[0].contentId'],
    [
      'a bad media type',
      [{ filename: 'a.txt', content: btoa('x'), contentType: 'text/plain\r\nX: y' }],
      'attachments[0].contentType',
    ],
    ['21 files', Array.from({ length: 21 }, (_, i) => ({ filename: `${i}.txt`, content: btoa('x') })), 'attachments'],
    ['over 10 MB decoded', [{ filename: 'a.bin', content: 'A'.repeat(13_400_000) }], 'attachments'],
    ['an unknown field', [{ filename: 'a.txt', content: btoa('x'), encoding: 'base64' }], 'attachments[0]'],
  ];

  it.each(cases)('%s → 400 naming the field, nothing stored', async (_name, attachments, field) => {
    const { mailKey } = await newAccount();
    const res = await queue(mailKey, { to: uniqueAddress('bad'), subject: 's', text: 'x', attachments });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message.startsWith(`${field}`), res.json.error.message).toBe(true);
    expect(await sendLogTotal(mailKey)).toBe(0);
  });

  const paths: [string, string][] = [
    ['a 404', '/status/404'],
    ['a redirect (not followed)', '/status/302'],
    ['a server error', '/status/500'],
    ['over 10 MB', '/files/10000001'],
    ['an empty file', '/files/0'],
  ];

  it.each(paths)('a path answering %s → 400, nothing stored', async (_name, path) => {
    const { mailKey } = await newAccount();
    const res = await queue(mailKey, {
      to: uniqueAddress('badpath'),
      subject: 's',
      text: 'x',
      attachments: [{ filename: 'a.bin', path: `${env.FILE_SERVER_URL}${path}` }],
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toMatch(/^attachments/);
    expect(await sendLogTotal(mailKey)).toBe(0);
  });

  it('a path that is not public https or names a local host is refused unfetched (production rules)', async () => {
    const { mailKey } = await newAccount();
    const strict = { ...env, WEBHOOK_ALLOW_INSECURE: 'false' };
    const port = new URL(env.FILE_SERVER_URL).port;
    const localName = 'must not name a local host';
    for (const [path, reason] of [
      ['http://example.com/a.pdf', 'expected an https URL'],
      ['https://127.0.0.1/a.pdf', 'must not point at a private'],
      ['https://10.0.0.1/a', 'must not point at a private'],
      ['ftp://x.example/a', 'expected an https URL'],
      // Any case, trailing dots: the same local names.
      [`https://LocalHost.:${port}/files/10`, localName],
      [`https://files.localhost.:${port}/files/10`, localName],
      ['https://printer.local./a.pdf', localName],
      ['https://db.internal/a.pdf', localName],
      ['https://nas.home.arpa/a.pdf', localName],
      ['https://fileserver/a.pdf', localName],
    ]) {
      const res = await queue(
        mailKey,
        { to: uniqueAddress('ssrf'), subject: 's', text: 'x', attachments: [{ filename: 'a.pdf', path }] },
        strict,
      );
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message, path).toMatch(`attachments[0].path: ${reason}`);
    }
    expect(await sendLogTotal(mailKey)).toBe(0);
  });
});
