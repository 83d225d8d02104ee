// worker-mailer 1.2.1, mended where it falls short of what postcode needs. It stays the SMTP transport;
// these replace private methods of its classes (checked against the pinned version's source).
import { WorkerMailer } from 'worker-mailer';
import type { RecipientRefusal } from './outgoing';

/** Every recipient was refused at RCPT TO: there is no one to send DATA to. */
export class RecipientsRefused extends Error {
  constructor(readonly refused: RecipientRefusal[]) {
    // A transient refusal decides: the message may still reach that recipient later.
    const deciding = refused.find((r) => !r.permanent) ?? refused[0]!;
    super(deciding.reply);
  }
}

/** The server closed the connection while a reply was awaited. */
class ConnectionClosed extends Error {}

export const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 500);

/** The parts of worker-mailer's connection we have to reach (see the patches below and `abort`). */
export type MailerInternals = {
  socket: Socket;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  startTls: boolean;
  secure: boolean;
  supportsStartTls: boolean;
  supportsDSN: boolean;
  emailSending: {
    from: { email: string };
    to: { email: string }[];
    cc?: { email: string }[];
    bcc?: { email: string }[];
    headers: Record<string, string>;
  } | null;
  /** Ours: the RCPT refusals of the message being sent. */
  refused: RecipientRefusal[];
  auth(): Promise<void>;
  rcpt(): Promise<void>;
  writeLine(line: string): Promise<void>;
  write(data: string): Promise<void>;
  readTimeout(): Promise<string>;
  read(): Promise<string>;
  waitForSocketConnected(): Promise<void>;
  initializeSmtpSession(): Promise<void>;
  start(): Promise<void>;
  notificationBuilder(): string;
  parseCapabilities(ehloReply: string): void;
  tls(): Promise<void>;
  mail(): Promise<void>;
  data(): Promise<void>;
  body(): Promise<void>;
  /** Ours: the server offers PIPELINING (RFC 2920), from its last EHLO. */
  supportsPipelining: boolean;
  /** Ours: what the server sent beyond the replies read so far, and its decoder. */
  received: string;
  decoder: TextDecoder;
};

const mailerPrototype = WorkerMailer.prototype as unknown as MailerInternals;

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

/**
 * Replaces worker-mailer 1.2.1's private `read`, which returns whatever the socket delivered (with
 * pipelining, several replies at once) and, once the server closes the socket, spins forever on EOF,
 * freezing the isolate. This one returns exactly one reply, keeps what follows for the next read, and
 * ends the exchange with an error on EOF.
 */
mailerPrototype.read = async function (this: MailerInternals) {
  this.decoder ??= new TextDecoder();
  this.received ??= '';
  for (;;) {
    const end = replyEnd(this.received);
    if (end !== -1) {
      const reply = this.received.slice(0, end);
      this.received = this.received.slice(end);
      return reply;
    }
    const { value, done } = await this.reader.read();
    if (done) throw new ConnectionClosed('connection closed by the SMTP server');
    this.received += this.decoder.decode(value, { stream: true });
  }
};

/**
 * worker-mailer 1.2.1 races every reply, and the socket's opening, against a timer it never clears: each
 * leaves a timer behind for the whole timeout (thousands at a time under load, each firing later for
 * nothing). postcode bounds each exchange as a whole instead (connecting, each message, closing: see
 * SmtpConnection), and drops the socket when that time runs out, which ends any read still waiting. So
 * these read and wait without timers of their own.
 */
mailerPrototype.readTimeout = function (this: MailerInternals) {
  return this.read();
};
mailerPrototype.waitForSocketConnected = async function (this: MailerInternals) {
  await this.socket.opened;
};

/**
 * worker-mailer 1.2.1 carries on in plaintext (and sends AUTH) when STARTTLS was asked for but the
 * server does not offer it. With SMTP_SECURE=starttls we refuse instead, before AUTH or any mail.
 */
const authenticate = mailerPrototype.auth;
mailerPrototype.auth = async function (this: MailerInternals) {
  if (this.startTls && !this.secure && !this.supportsStartTls) {
    throw new Error(
      'the SMTP server does not offer STARTTLS (SMTP_SECURE=starttls): refusing to continue in plaintext',
    );
  }
  return authenticate.call(this);
};

const parseCapabilities = mailerPrototype.parseCapabilities;
mailerPrototype.parseCapabilities = function (this: MailerInternals, ehloReply: string) {
  parseCapabilities.call(this, ehloReply);
  // After STARTTLS the second EHLO's answer is the one that counts.
  this.supportsPipelining = /^\d{3}[ -]PIPELINING\b/im.test(ehloReply);
};

/**
 * Around worker-mailer 1.2.1's `tls`: anything the server sent after its 220 to STARTTLS came in plaintext
 * and must never be read as a reply over TLS (someone on the path could inject one, RFC 3207 §6), so such
 * a connection is refused before anything is read over TLS. After the upgrade the replies' decoder and
 * the capabilities start afresh (the EHLO that follows sets them again).
 */
const upgrade = mailerPrototype.tls;
mailerPrototype.tls = async function (this: MailerInternals) {
  await upgrade.call(this);
  if (this.received) throw new Error('the SMTP server sent more after its 220 to STARTTLS: refusing the connection');
  this.decoder = new TextDecoder();
  this.supportsPipelining = false;
};

/**
 * Replaces worker-mailer 1.2.1's `mail`, `rcpt` and `data`, which send the envelope one command per round
 * trip and give up the whole message when one RCPT TO is refused. Where the server offers PIPELINING,
 * MAIL FROM, every RCPT TO and DATA go out in one write and their replies are read in order (two round
 * trips per message instead of three plus one per recipient). Each RCPT refusal is recorded and the
 * message goes to the recipients the server accepted; only when every recipient was refused does it stop
 * before the message. Every reply is read before an error is thrown, so the RSET that follows is answered
 * in step.
 */
mailerPrototype.mail = async function (this: MailerInternals) {
  const sending = this.emailSending!;
  const recipients = [...sending.to, ...(sending.cc ?? []), ...(sending.bcc ?? [])].map((r) => r.email);
  const notify = this.supportsDSN ? this.notificationBuilder() : '';
  const commands = [
    `MAIL FROM:<${sending.from.email}>`,
    ...recipients.map((email) => `RCPT TO:<${email}>${notify}`),
    'DATA',
  ];
  const replies: string[] = [];
  if (this.supportsPipelining) {
    await this.write(commands.map((command) => `${command}\r\n`).join(''));
    for (const _command of commands) {
      try {
        replies.push(await this.readTimeout());
      } catch (error) {
        // A server may hang up after refusing the sender: that refusal decides, not the closed connection.
        if (error instanceof ConnectionClosed && replies[0] !== undefined && !replies[0].startsWith('2')) break;
        throw error;
      }
    }
  } else {
    // One at a time: stop after a refused MAIL FROM, or before DATA when no recipient is left.
    for (const [index, command] of commands.entries()) {
      if (command === 'DATA' && replies.slice(1).every((reply) => !reply.startsWith('2'))) break;
      await this.writeLine(command);
      const reply = await this.readTimeout();
      replies.push(reply);
      if (index === 0 && !reply.startsWith('2')) break;
    }
  }
  const [mailReply = '', ...rest] = replies;
  const recipientReplies = rest.slice(0, recipients.length);
  const dataReply = rest[recipients.length];
  const mailRefused = !mailReply.startsWith('2');
  // After a refused MAIL FROM, the RCPT replies (503, bad sequence) say nothing about the recipients.
  this.refused = mailRefused
    ? []
    : recipientReplies.flatMap((reply, i) =>
        reply.startsWith('2')
          ? []
          : [{ email: recipients[i]!, reply: oneLine(reply), permanent: reply.startsWith('5') }],
      );
  const nobodyLeft = this.refused.length === recipients.length;
  // A server may answer a pipelined DATA with 354 although nothing can be delivered: end it empty.
  if (dataReply?.startsWith('3') && (mailRefused || nobodyLeft)) {
    await this.write('.\r\n');
    await this.readTimeout();
  }
  if (mailRefused) throw new Error(`Invalid ${commands[0]} ${mailReply}`);
  if (nobodyLeft) throw new RecipientsRefused(this.refused);
  if (!dataReply?.startsWith('3')) throw new Error(`Failed to send DATA: ${dataReply}`);
};
// The envelope, DATA included, went out with `mail` above.
mailerPrototype.rcpt = async () => undefined;
mailerPrototype.data = async () => undefined;

const WRITE_SIZE = 64 * 1024;

/** The messages postcode composed (mime.ts), by the `headers` object handed to worker-mailer's `send`. */
const composed = new WeakMap<object, AsyncIterable<string>>();

/**
 * worker-mailer's `send(options)` builds its Email with `options.headers` kept by reference as
 * `email.headers`; this returns such an object that carries our composed message to the patched `body()`.
 */
export function composedMessage(message: AsyncIterable<string>): Record<string, string> {
  const headers: Record<string, string> = {};
  composed.set(headers, message);
  return headers;
}

/**
 * worker-mailer 1.2.1 builds the whole message as one string (its own MIME, no Cc without Bcc leaking into
 * headers, no inline parts, attachments in memory). This replacement of its private `body` writes our
 * composed message chunk by chunk (attachments stream from R2), then reads the server's answer to it.
 */
mailerPrototype.body = async function (this: MailerInternals) {
  const message = composed.get(this.emailSending!.headers);
  if (!message) throw new Error('no composed message for this email');
  // Small pieces are gathered into writes of up to 64 KiB: one socket write for an ordinary message.
  let pending = '';
  for await (const chunk of message) {
    pending += chunk;
    if (pending.length >= WRITE_SIZE) {
      await this.write(pending);
      pending = '';
    }
  }
  if (pending) await this.write(pending);
  const reply = await this.readTimeout();
  if (!reply.startsWith('2')) throw new Error(`Failed send email body: ${reply}`);
};
