// worker-mailer 1.2.1, mended where it falls short of what postcode needs. It stays the SMTP transport;
// these replace private methods of its classes (checked against the pinned version's source).
import { WorkerMailer } from 'worker-mailer';
import type { RecipientRefusal } from './smtp';

/** Every recipient was refused at RCPT TO: there is no one to send DATA to. */
export class RecipientsRefused extends Error {
  constructor(readonly refused: RecipientRefusal[]) {
    // A transient refusal decides: the message may still reach that recipient later.
    const deciding = refused.find((r) => !r.permanent) ?? refused[0]!;
    super(deciding.reply);
  }
}

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
  responseTimeoutMs: number;
  notificationBuilder(): string;
  body(): Promise<void>;
};

const mailerPrototype = WorkerMailer.prototype as unknown as MailerInternals;

/**
 * worker-mailer 1.2.1 reads replies with `if (!value) continue`, so once the server closes the
 * socket every read resolves at once with EOF and the loop spins forever, freezing the isolate.
 * This replacement of its private `read` ends the exchange with an error on EOF instead.
 */
mailerPrototype.read = async function (this: MailerInternals) {
  const decoder = new TextDecoder();
  let response = '';
  for (;;) {
    const { value, done } = await this.reader.read();
    if (done) throw new Error('connection closed by the SMTP server');
    response += decoder.decode(value, { stream: true });
    if (!response.endsWith('\n')) continue;
    const lines = response.split(/\r?\n/);
    // Multi-line replies continue with "250-"; the last line has "250 ".
    if (!/^\d+-/.test(lines[lines.length - 2] ?? '')) return response;
  }
};

/**
 * worker-mailer 1.2.1 races every reply against a timer it never clears, so each command leaves a timer
 * behind for the whole response timeout (thousands at a time under load, each firing later for nothing).
 * This replacement clears it as soon as the reply is in.
 */
mailerPrototype.readTimeout = function (this: MailerInternals) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error('Timeout while waiting for smtp server response')),
      this.responseTimeoutMs,
    );
  });
  return Promise.race([this.read(), timeout]).finally(() => timer !== undefined && clearTimeout(timer));
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

/**
 * worker-mailer 1.2.1 gives up the whole message when one RCPT TO is refused. This replacement records
 * each refusal and carries on, so the message reaches the recipients the server accepted; only when
 * every recipient was refused does it stop before DATA.
 */
mailerPrototype.rcpt = async function (this: MailerInternals) {
  const sending = this.emailSending!;
  const recipients = [...sending.to, ...(sending.cc ?? []), ...(sending.bcc ?? [])];
  this.refused = [];
  for (const { email } of recipients) {
    const command = `RCPT TO: <${email}>${this.supportsDSN ? this.notificationBuilder() : ''}`;
    await this.writeLine(command);
    const reply = await this.readTimeout();
    if (!reply.startsWith('2')) this.refused.push({ email, reply: oneLine(reply), permanent: reply.startsWith('5') });
  }
  if (this.refused.length === recipients.length) throw new RecipientsRefused(this.refused);
};

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
