// The message as it goes over DATA: headers, the text and html parts, and attachments streamed from their
// source as base64. Our own writer, because no maintained MIME library for Workers streams parts (they
// build one string), and a 10 MB attachment should not sit in memory three times over. The SMTP client
// (smtp/connection.ts) writes these chunks as they come.
import { toBase64 } from '../base64';
import { addressHeader, customHeader, unstructuredHeader } from './headers';
import type { OutgoingAttachment, OutgoingMail } from './outgoing';
import { quotedPrintable } from './quoted-printable';

/** Reading an attachment's content failed part-way: the message must not be finished. */
export class AttachmentReadFailed extends Error {}

type Leaf = { headers: string[]; body: () => AsyncIterable<string> };
type Part = Leaf | { multipart: 'mixed' | 'related' | 'alternative'; boundary: string; parts: Part[] };

/**
 * What makes two writings of one message the same bytes: its Date and the base of its boundaries. A signed
 * message is written twice (the body hashed, then sent), and a signature covers exactly what is sent.
 */
export type MessageFrame = {
  date: string;
  boundary: string;
  /** The text parts encoded by the first writing, for the second. */
  encoded: Map<string, string>;
};
export const newFrame = (now = new Date()): MessageFrame => ({
  date: now.toUTCString(),
  boundary: boundary(),
  encoded: new Map(),
});

const BASE64_LINE_BYTES = 57; // 76 characters of base64
const PARAM_SEGMENT = 60;
const PLAIN_PARAM = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,60}$/;

function boundary(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `pc_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

async function* once(text: string): AsyncIterable<string> {
  yield text;
}

/** Base64 in 76-character lines (the last one ends without CRLF), for bytes a multiple of 57 long or the tail. */
const base64Lines = (bytes: Uint8Array) => (toBase64(bytes).match(/.{1,76}/g) ?? []).join('\r\n');

/** A stream as base64 lines, read chunk by chunk: only the bytes of one chunk are held at a time. */
async function* base64Stream(stream: ReadableStream<Uint8Array>): AsyncIterable<string> {
  const reader = stream.getReader();
  let carry = new Uint8Array(0);
  let first = true;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        throw new AttachmentReadFailed(`attachment content could not be read: ${String(error)}`);
      }
      if (next.done) break;
      const joined = new Uint8Array(carry.length + next.value.length);
      joined.set(carry);
      joined.set(next.value, carry.length);
      const whole = joined.length - (joined.length % BASE64_LINE_BYTES);
      if (whole > 0) {
        yield (first ? '' : '\r\n') + base64Lines(joined.subarray(0, whole));
        first = false;
      }
      carry = joined.slice(whole);
    }
    if (carry.length > 0) yield (first ? '' : '\r\n') + base64Lines(carry);
  } finally {
    reader.releaseLock();
  }
}

/** `name="value"` when short plain ASCII, else RFC 2231 (`name*0*=UTF-8''…`), one parameter per folded line. */
function parameter(name: string, value: string): string {
  if (PLAIN_PARAM.test(value)) return `;\r\n ${name}="${value}"`;
  const encoded = encodeURIComponent(value).replace(
    /['()*!]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  const segments = encoded.match(new RegExp(`(?:%[0-9A-F]{2}|[^%]){1,${PARAM_SEGMENT}}`, 'g')) ?? [];
  return segments.map((segment, i) => `;\r\n ${name}*${i}*=${i === 0 ? "UTF-8''" : ''}${segment}`).join('');
}

function textPart(type: 'plain' | 'html', text: string, frame: MessageFrame): Leaf {
  const encoded = () => {
    let body = frame.encoded.get(type);
    if (body === undefined) {
      body = quotedPrintable(text);
      frame.encoded.set(type, body);
    }
    return body;
  };
  return {
    headers: [`Content-Type: text/${type}; charset=utf-8`, 'Content-Transfer-Encoding: quoted-printable'],
    body: () => once(encoded()),
  };
}

function attachmentPart(attachment: OutgoingAttachment, content: () => ReadableStream<Uint8Array>): Leaf {
  const disposition = attachment.contentId ? 'inline' : 'attachment';
  return {
    headers: [
      `Content-Type: ${attachment.contentType}${parameter('name', attachment.filename)}`,
      `Content-Disposition: ${disposition}${parameter('filename', attachment.filename)}`,
      'Content-Transfer-Encoding: base64',
      ...(attachment.contentId ? [`Content-ID: <${attachment.contentId}>`] : []),
    ],
    body: () => base64Stream(content()),
  };
}

/**
 * text/html alternatives, inline files (related) and regular files (mixed), each level only when needed;
 * boundaries numbered from the frame's base, outermost last. Contents are read only when a body is written.
 */
function structure(mail: OutgoingMail, contents: ReadableStream<Uint8Array>[], frame: MessageFrame): Part {
  let boundaries = 0;
  const multipart = (kind: 'mixed' | 'related' | 'alternative', parts: Part[]): Part => ({
    multipart: kind,
    boundary: `${frame.boundary}_${boundaries++}`,
    parts,
  });
  const texts = [
    ...(mail.text !== null ? [textPart('plain', mail.text, frame)] : []),
    ...(mail.html !== null ? [textPart('html', mail.html, frame)] : []),
  ];
  let part: Part = texts.length === 1 ? texts[0]! : multipart('alternative', texts);
  const files = (mail.attachments ?? []).map((a, i) => ({
    inline: a.contentId !== null,
    part: attachmentPart(a, () => contents[i]!),
  }));
  const inline = files.filter((f) => f.inline).map((f) => f.part);
  const regular = files.filter((f) => !f.inline).map((f) => f.part);
  if (inline.length > 0) part = multipart('related', [part, ...inline]);
  if (regular.length > 0) part = multipart('mixed', [part, ...regular]);
  return part;
}

/** A part's own header lines. */
const partHeaders = (part: Part): string[] =>
  'headers' in part ? part.headers : [`Content-Type: multipart/${part.multipart};\r\n boundary="${part.boundary}"`];

/** A part's body (after its blank line); every chunk ends where a line ends. */
async function* partBody(part: Part): AsyncIterable<string> {
  if ('headers' in part) {
    yield* part.body();
    yield '\r\n';
    return;
  }
  for (const child of part.parts) {
    yield `--${part.boundary}\r\n${partHeaders(child).join('\r\n')}\r\n\r\n`;
    yield* partBody(child);
  }
  yield `--${part.boundary}--\r\n`;
}

function headerBlock(mail: OutgoingMail, frame: MessageFrame): string {
  const mailboxes = (list: string[] = []) => list.map((email) => ({ email }));
  const lines = [
    `From: ${addressHeader('From', [mail.from])}`,
    mail.to.length > 0 ? `To: ${addressHeader('To', mailboxes(mail.to))}` : 'To: undisclosed-recipients:;',
    ...(mail.cc?.length ? [`Cc: ${addressHeader('Cc', mailboxes(mail.cc))}`] : []),
    ...(mail.replyTo?.length ? [`Reply-To: ${addressHeader('Reply-To', mailboxes(mail.replyTo))}`] : []),
    `Subject: ${unstructuredHeader('Subject', mail.subject)}`,
    `Date: ${frame.date}`,
    `Message-ID: ${mail.messageId}`,
    'MIME-Version: 1.0',
    ...Object.entries(mail.headers ?? {}).map(([name, value]) => `${name}: ${customHeader(name, value)}`),
  ];
  return lines.join('\r\n');
}

/**
 * The message as `frame` writes it (`contents[i]`: the i-th attachment's opened content), its MIME tree built
 * once: the head (every header field, its top part's included, each line ending in CRLF, no blank line after)
 * and the body that follows the blank line.
 */
export function messageParts(mail: OutgoingMail, contents: ReadableStream<Uint8Array>[], frame: MessageFrame) {
  const part = structure(mail, contents, frame);
  return {
    head: `${headerBlock(mail, frame)}\r\n${partHeaders(part).join('\r\n')}\r\n`,
    body: (): AsyncIterable<string> => partBody(part),
  };
}

/**
 * The DATA payload of `mail` (`contents[i]` is the opened content of its i-th attachment), ending with the
 * terminating "." line; `signature` (a DKIM-Signature field) goes first. Bcc recipients are the envelope's
 * business: no header names them.
 */
export async function* messageChunks(
  mail: OutgoingMail,
  contents: ReadableStream<Uint8Array>[],
  frame = newFrame(),
  signature?: string,
): AsyncIterable<string> {
  const { head, body } = messageParts(mail, contents, frame);
  yield `${signature ? `${signature}\r\n` : ''}${head}\r\n`;
  yield* body();
  yield '.\r\n';
}
