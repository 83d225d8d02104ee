// An email as it leaves for an SMTP server, and a recipient the server refused: types only, shared by the
// MIME writer and the SMTP client.
import type { DkimKey } from './dkim';

/** An attachment of an outgoing mail; `open` is called once per attempt (null: its content is gone). */
export type OutgoingAttachment = {
  filename: string;
  contentType: string;
  /** Set: an inline part with this Content-ID (html refers to it as cid:…). */
  contentId: string | null;
  /** Bytes of the content (before base64). */
  size: number;
  open(): Promise<ReadableStream<Uint8Array> | null>;
};

/** An email ready for the wire. Addresses, names and headers were validated before they got here. */
export type OutgoingMail = {
  from: { email: string; name: string | null };
  /** The To header: every To recipient as given (none: `undisclosed-recipients:;`). */
  to: string[];
  cc?: string[];
  replyTo?: string[];
  /** The envelope (RCPT TO) when it is not `to`: Bcc recipients, and a retry only to those still waiting. */
  envelopeTo?: string[];
  subject: string;
  html: string | null;
  text: string | null;
  messageId: string;
  /** Extra headers a sender set (allow-listed names, one-line values). */
  headers?: Record<string, string>;
  attachments?: OutgoingAttachment[];
  /** Set: the message is signed with this key (the From address is on its verified domain). */
  dkim?: DkimKey;
  /** MAIL FROM when it is not the From address: the return path (bounces+<token>@…). */
  envelopeFrom?: string;
};

/**
 * A recipient the server refused at RCPT TO (the message still goes to the others). `suppressed`: the
 * provider refused it as on its own suppression list (the recipient is SUPPRESSED, not FAILED).
 */
export type RecipientRefusal = { email: string; reply: string; permanent: boolean; suppressed?: boolean };
