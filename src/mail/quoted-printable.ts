// Quoted-printable (RFC 2045 6.7) for mail bodies, written so that the DATA payload never needs SMTP
// dot-stuffing: a "." that would start a line is encoded.

const encoder = new TextEncoder();
const HEX = '0123456789ABCDEF';
/** Characters of an encoded line before the soft break "=" (76 in all). */
const MAX_ENCODED = 75;

const escaped = (byte: number) => `=${HEX[byte >> 4]}${HEX[byte & 15]}`;

function encodeLine(line: string): string {
  const bytes = encoder.encode(line);
  const lines: string[] = [];
  let current = '';
  bytes.forEach((byte, index) => {
    const whitespace = byte === 0x20 || byte === 0x09;
    const literal = (byte >= 33 && byte <= 126 && byte !== 61) || (whitespace && index < bytes.length - 1);
    let token = literal ? String.fromCharCode(byte) : escaped(byte);
    if (current.length + token.length > MAX_ENCODED) {
      lines.push(`${current}=`);
      current = '';
    }
    if (current === '' && token === '.') token = escaped(byte);
    current += token;
  });
  lines.push(current);
  return lines.join('\r\n');
}

/** UTF-8 text as quoted-printable with CRLF line breaks; every line at most 76 characters. */
export function quotedPrintable(text: string): string {
  return text
    .replace(/\r\n|\r/g, '\n')
    .split('\n')
    .map(encodeLine)
    .join('\r\n');
}
