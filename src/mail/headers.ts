// Header values as RFC 5322 and RFC 2047 want them on the wire: lines folded at 78 characters where
// possible (never over 998), non-ASCII text as encoded words of at most 75 characters, and encoded words
// never inside quotes. mime.ts writes the header block from these values.
import { toBase64 } from '../base64';

const MAX_LINE = 78;
/**
 * `=?UTF-8?B?` + `?=` around at most 56 base64 characters (42 bytes): 68 characters per word, so that
 * one fits on a header's first line after a name as long as `Reply-To: `.
 */
const WORD_BYTES = 42;
const ASCII_TEXT = /^[\x20-\x7e]*$/;
/** A display name that can go out as one quoted string (no quotes or backslashes, per `isSafeDisplayName`). */
const PLAIN_NAME = /^[\x20-\x7e]{1,60}$/;

const encoder = new TextEncoder();
const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/**
 * UTF-8 text as encoded words of whole characters (a grapheme cluster is kept in one word when it fits, so
 * a reader never sees half an emoji between two words).
 */
export function encodedWords(text: string): string[] {
  const words: string[] = [];
  let chunk = '';
  const flush = () => {
    if (chunk) words.push(`=?UTF-8?B?${toBase64(encoder.encode(chunk))}?=`);
    chunk = '';
  };
  const pieces = [...graphemes.segment(text)].flatMap(({ segment }) =>
    encoder.encode(segment).length <= WORD_BYTES ? [segment] : [...segment],
  );
  for (const piece of pieces) {
    if (encoder.encode(chunk + piece).length > WORD_BYTES) flush();
    chunk += piece;
  }
  flush();
  return words;
}

/** Joins tokens with single spaces, folding (CRLF + space) before a token that would pass 78 columns. */
function fold(name: string, tokens: string[]): string {
  let line = `${name}:`;
  const lines: string[] = [];
  for (const token of tokens) {
    if (line.length + 1 + token.length > MAX_LINE && line.trim() !== `${name}:`) {
      lines.push(line);
      line = '';
    }
    line += ` ${token}`;
  }
  lines.push(line);
  // The value only: the header block writes `${name}: ${value}`.
  return lines.join('\r\n').slice(name.length + 2);
}

/** An unstructured header (Subject): plain words folded at spaces, else encoded words. */
export function unstructuredHeader(name: string, text: string): string {
  const words = text.split(' ');
  const foldable =
    ASCII_TEXT.test(text) &&
    text === text.trim() &&
    !text.includes('  ') &&
    words.every((w) => w.length <= MAX_LINE - name.length - 2);
  return fold(name, foldable ? words.filter((w) => w !== '') : encodedWords(text));
}

/**
 * A header a sender set (List-Unsubscribe, X-*): ASCII text keeps its exact characters (a URL in angle
 * brackets must not become an encoded word), folded at single spaces where it can be; non-ASCII text is
 * written as encoded words.
 */
export function customHeader(name: string, text: string): string {
  if (!ASCII_TEXT.test(text)) return unstructuredHeader(name, text);
  const foldable = text === text.trim() && !text.includes('  ');
  return foldable ? fold(name, text.split(' ')) : text;
}

export type Mailbox = { email: string; name?: string | null };

/** The tokens of one mailbox: `"Name" <a@b>` for a short ASCII name, encoded words otherwise (never quoted). */
function mailboxTokens({ email, name }: Mailbox): string[] {
  if (!name) return [email];
  const display = PLAIN_NAME.test(name) ? [`"${name}"`] : encodedWords(name);
  return [...display, `<${email}>`];
}

/** An address list header (From, To), folded between and inside mailboxes. */
export function addressHeader(name: string, mailboxes: Mailbox[]): string {
  const tokens = mailboxes.flatMap((mailbox, index) => {
    const parts = mailboxTokens(mailbox);
    if (index < mailboxes.length - 1) parts[parts.length - 1] += ',';
    return parts;
  });
  return fold(name, tokens);
}
