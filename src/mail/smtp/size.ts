// The size a message will have on the wire, estimated before it is written (RFC 1870 lets a client
// declare an estimate with MAIL FROM ... SIZE=): the bodies are known, attachments only by their size.
import type { OutgoingMail } from '../outgoing';

const encoder = new TextEncoder();
/** Headers, MIME boundaries and part headers of a message: generous, an estimate may be a little high. */
const STRUCTURE_BYTES = 2_048;
/** A DKIM-Signature of a 2048-bit key, folded: about 500 bytes. */
const SIGNATURE_BYTES = 768;
/** Quoted-printable of ordinary text and html: soft breaks every 76 characters, a few escapes. */
const QUOTED_PRINTABLE = 1.05;
/** Base64 in 76-character lines: 4 characters per 3 bytes, and a CRLF per 57 bytes. */
const BASE64 = (4 / 3) * (78 / 76);

/** About how many bytes `mail` takes over DATA. */
export function estimatedSize(mail: OutgoingMail): number {
  const text = (value: string | null) => (value === null ? 0 : encoder.encode(value).length * QUOTED_PRINTABLE);
  const attachments = (mail.attachments ?? []).reduce((sum, a) => sum + a.size * BASE64 + 256, 0);
  const signature = mail.dkim ? SIGNATURE_BYTES : 0;
  return Math.ceil(STRUCTURE_BYTES + signature + text(mail.subject) + text(mail.text) + text(mail.html) + attachments);
}
