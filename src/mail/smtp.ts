import { waitUntil } from 'cloudflare:workers';
import { WorkerMailer } from 'worker-mailer';
import type { SmtpConfig } from '../config';

/** An email ready for the wire. Addresses and names were validated before they got here. */
export type OutgoingMail = {
  from: { email: string; name: string | null };
  to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  messageId: string;
};

/**
 * accepted: the server took the message (250 after DATA). permanent: a 5xx reply. transient: 4xx,
 * network fault or timeout; the message may be retried (a timeout after the final "." can mean the
 * server took it, which is why every email keeps one Message-ID).
 */
export type SmtpOutcome =
  | { kind: 'accepted' }
  | { kind: 'permanent'; reply: string }
  | { kind: 'transient'; reply: string };

class SmtpTimeout extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SmtpTimeout(`timeout after ${ms} ms while ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => timer !== undefined && clearTimeout(timer));
}

/** worker-mailer throws plain Errors whose message embeds the server's reply; find its 3-digit code. */
export function classifySmtpError(error: unknown): Exclude<SmtpOutcome, { kind: 'accepted' }> {
  const message = error instanceof Error ? error.message : String(error);
  const reply = message.replace(/\s+/g, ' ').trim().slice(0, 500);
  if (error instanceof SmtpTimeout) return { kind: 'transient', reply };
  const code = message.match(/(?:^|\s)([245]\d\d)(?:[ -]|$)/m)?.[1];
  if (code?.startsWith('5')) return { kind: 'permanent', reply };
  return { kind: 'transient', reply };
}

/** The parts of worker-mailer's connection we have to reach (see the patches below and `abort`). */
type MailerInternals = {
  socket: Socket;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  startTls: boolean;
  secure: boolean;
  supportsStartTls: boolean;
  auth(): Promise<void>;
};

const mailerPrototype = WorkerMailer.prototype as unknown as MailerInternals;

/**
 * worker-mailer 1.2.1 reads replies with `if (!value) continue`, so once the server closes the
 * socket every read resolves at once with EOF and the loop spins forever, freezing the isolate.
 * This replacement of its private `read` ends the exchange with an error on EOF instead.
 */
(mailerPrototype as unknown as { read(this: MailerInternals): Promise<string> }).read = async function () {
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

/** One SMTP connection; send several messages over it, then close. */
export class SmtpConnection {
  private aborted = false;

  private constructor(
    private readonly mailer: WorkerMailer,
    private readonly config: SmtpConfig,
  ) {}

  static async open(config: SmtpConfig): Promise<SmtpConnection> {
    const mailer = await withTimeout(
      WorkerMailer.connect({
        host: config.host,
        port: config.port,
        secure: config.security === 'tls',
        startTls: config.security === 'starttls',
        credentials: config.credentials,
        authType: ['plain', 'login', 'cram-md5'],
        socketTimeoutMs: config.timeoutMs,
        logLevel: 4, // NONE: the library would log addresses and replies.
      }),
      config.timeoutMs,
      'connecting',
    );
    return new SmtpConnection(mailer, config);
  }

  private get internals(): MailerInternals {
    return this.mailer as unknown as MailerInternals;
  }

  async send(mail: OutgoingMail): Promise<SmtpOutcome> {
    try {
      const sending = this.mailer.send({
        from: mail.from.name ? { email: mail.from.email, name: mail.from.name } : mail.from.email,
        to: mail.to,
        subject: mail.subject,
        html: mail.html ?? undefined,
        text: mail.text ?? undefined,
        headers: { 'Message-ID': mail.messageId },
      });
      await withTimeout(sending, this.config.timeoutMs, 'sending');
      return { kind: 'accepted' };
    } catch (error) {
      const outcome = classifySmtpError(error);
      // A 5xx leaves the session usable (worker-mailer sends RSET); anything else may not have.
      if (outcome.kind === 'transient') this.abort();
      return outcome;
    }
  }

  /** After a failure the session state is unknown: drop the socket and stop worker-mailer's read loop. */
  private abort(): void {
    this.aborted = true;
    try {
      this.internals.reader.releaseLock();
    } catch {}
    this.internals.socket.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    if (!this.aborted) await withTimeout(this.mailer.close(), 2_000, 'closing').catch(() => undefined);
    this.abort();
  }
}

type SmtpFailure = Exclude<SmtpOutcome, { kind: 'accepted' }>;

/** A connection being opened (greeting, EHLO, STARTTLS, AUTH), or why that failed. */
export type PendingConnection = Promise<SmtpConnection | SmtpFailure>;

/** Starts opening a connection now, so the SMTP handshake overlaps other work of the request. */
export function startConnecting(config: SmtpConfig): PendingConnection {
  return SmtpConnection.open(config).catch(classifySmtpError);
}

/** Closes a connection that will carry no mail (the request failed before its mail was ready). */
export function dropConnection(pending: PendingConnection): void {
  waitUntil(pending.then((connection) => (connection instanceof SmtpConnection ? connection.close() : undefined)));
}

/**
 * Sends one message over a new (or already opening) connection. Connection failures come back as
 * outcomes too. QUIT runs after the caller has its outcome: the server has already taken the mail.
 */
export async function sendOnce(
  config: SmtpConfig,
  mail: OutgoingMail,
  pending = startConnecting(config),
): Promise<SmtpOutcome> {
  const connection = await pending;
  if (!(connection instanceof SmtpConnection)) return connection;
  try {
    return await connection.send(mail);
  } finally {
    waitUntil(connection.close());
  }
}
