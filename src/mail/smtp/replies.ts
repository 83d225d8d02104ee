// SMTP replies off the wire (RFC 5321 §4.2): one complete reply per read, however the bytes arrived (a
// pipelined server answers several commands in one packet, a slow one splits a reply over several).

/** The server closed the connection while a reply was awaited. */
export class ConnectionClosed extends Error {
  constructor() {
    super('connection closed by the SMTP server');
  }
}

/** A reply as one line for logs and the send log (multi-line replies joined), at most 500 characters. */
export const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 500);

/** The end of the reply at the start of `text` (its last line has "250 ", not "250-"), or -1 if incomplete. */
export function replyEnd(text: string): number {
  let start = 0;
  for (;;) {
    const eol = text.indexOf('\n', start);
    if (eol === -1) return -1;
    if (!/^\d{3}-/.test(text.slice(start, start + 4))) return eol + 1;
    start = eol + 1;
  }
}

/** A complete reply: its code and its text, every line with its code, CRLFs kept. */
export type Reply = { code: number; text: string };

export const isPositive = (reply: Reply) => reply.code >= 200 && reply.code < 400;

/** Reads one reply at a time from a socket's readable side; what follows a reply waits for the next read. */
export class ReplyReader {
  private received = '';
  private readonly decoder = new TextDecoder();

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** Bytes that arrived beyond the replies read so far (a STARTTLS 220 must not have any after it). */
  get buffered(): boolean {
    return this.received.length > 0;
  }

  async next(): Promise<Reply> {
    for (;;) {
      const end = replyEnd(this.received);
      if (end !== -1) {
        const text = this.received.slice(0, end);
        this.received = this.received.slice(end);
        const code = Number(text.slice(0, 3));
        // A line without a code is no SMTP reply: the connection is out of step (or not SMTP at all).
        if (!(code >= 200 && code < 600)) throw new Error(`not an SMTP reply: ${oneLine(text)}`);
        return { code, text };
      }
      const { value, done } = await this.reader.read();
      if (done) throw new ConnectionClosed();
      this.received += this.decoder.decode(value, { stream: true });
    }
  }

  release(): void {
    try {
      this.reader.releaseLock();
    } catch {}
  }
}
