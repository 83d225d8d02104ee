import { waitUntil } from 'cloudflare:workers';
import { WorkerMailer, type WorkerMailerOptions } from 'worker-mailer';
import type { SmtpConfig } from '../config';
import { composedMessage, type MailerInternals, oneLine, RecipientsRefused } from './mailer-patches';
import { AttachmentReadFailed, messageChunks } from './mime';
import type { OutgoingMail, RecipientRefusal } from './outgoing';

/**
 * accepted: the server took the message (250 after DATA) for every recipient not in `refused`.
 * permanent: a 5xx reply. transient: 4xx, network fault or timeout; the message may be retried (a
 * timeout after the final "." can mean the server took it, which is why every email keeps one
 * Message-ID). `refused` lists the recipients refused at RCPT TO before the outcome (empty if none).
 */
export type SmtpOutcome =
  | { kind: 'accepted'; refused?: RecipientRefusal[] }
  | { kind: 'permanent'; reply: string; refused?: RecipientRefusal[] }
  | { kind: 'transient'; reply: string; refused?: RecipientRefusal[] };

class SmtpTimeout extends Error {}

/**
 * Sending a message with attachments may take longer than one SMTP exchange (10 MB over a slow relay); the
 * delivery lease (60 s) still covers a connect (15 s) and such a send.
 */
const ATTACHMENT_SEND_TIMEOUT_MS = 40_000;

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
  const reply = oneLine(message);
  if (error instanceof RecipientsRefused) {
    const kind = error.refused.every((r) => r.permanent) ? 'permanent' : 'transient';
    return { kind, reply, refused: error.refused };
  }
  if (error instanceof SmtpTimeout || error instanceof AttachmentReadFailed) return { kind: 'transient', reply };
  const code = message.match(/(?:^|\s)([245]\d\d)(?:[ -]|$)/m)?.[1];
  if (code?.startsWith('5')) return { kind: 'permanent', reply };
  return { kind: 'transient', reply };
}

/** One SMTP connection; send several messages over it, then close. */
export class SmtpConnection {
  private aborted = false;

  private constructor(
    private readonly mailer: WorkerMailer,
    private readonly config: SmtpConfig,
  ) {}

  /**
   * What worker-mailer's `connect` does (its constructor opens the socket), with the handshake bounded as a
   * whole: past `timeoutMs` the socket is dropped, which ends the read still waiting (the patched reads
   * have no timers of their own).
   */
  static async open(config: SmtpConfig): Promise<SmtpConnection> {
    const connection = new SmtpConnection(
      new (WorkerMailer as unknown as new (options: WorkerMailerOptions) => WorkerMailer)({
        host: config.host,
        port: config.port,
        secure: config.security === 'tls',
        startTls: config.security === 'starttls',
        credentials: config.credentials,
        authType: ['plain', 'login', 'cram-md5'],
        logLevel: 4, // NONE: the library would log addresses and replies.
      }),
      config,
    );
    try {
      await withTimeout(connection.internals.initializeSmtpSession(), config.timeoutMs, 'connecting');
    } catch (error) {
      connection.abort();
      throw error;
    }
    // worker-mailer's loop that sends what `send` queues (its errors reach each message's promise).
    connection.internals.start().catch((error: unknown) => console.error('SMTP send loop stopped', String(error)));
    return connection;
  }

  private get internals(): MailerInternals {
    return this.mailer as unknown as MailerInternals;
  }

  async send(mail: OutgoingMail): Promise<SmtpOutcome> {
    this.internals.refused = [];
    const attachments = mail.attachments ?? [];
    const contents: ReadableStream<Uint8Array>[] = [];
    for (const attachment of attachments) {
      const content = await attachment.open();
      if (!content) {
        await Promise.all(contents.map((c) => c.cancel().catch(() => undefined)));
        return { kind: 'permanent', reply: `attachment ${attachment.filename}: content no longer available` };
      }
      contents.push(content);
    }
    try {
      // worker-mailer sends the envelope; the message itself is ours (mime.ts), written by the patched body().
      const sending = this.mailer.send({
        from: mail.from.email,
        to: mail.envelopeTo ?? mail.to,
        subject: mail.subject,
        text: '(composed by mime.ts)', // required by worker-mailer's Email; never written
        headers: composedMessage(messageChunks(mail, contents)),
      });
      const ms = attachments.length > 0 ? ATTACHMENT_SEND_TIMEOUT_MS : this.config.timeoutMs;
      await withTimeout(sending, ms, 'sending');
      return { kind: 'accepted', refused: this.internals.refused };
    } catch (error) {
      const outcome = classifySmtpError(error);
      // A 5xx leaves the session usable (worker-mailer sends RSET); anything else may not have.
      if (outcome.kind === 'transient') this.abort();
      return { ...outcome, refused: outcome.refused ?? this.internals.refused };
    } finally {
      // Content not sent (every recipient refused, a failure): let its source go.
      await Promise.all(contents.map((c) => (c.locked ? undefined : c.cancel().catch(() => undefined))));
    }
  }

  /** After a failure the session state is unknown: drop the socket and stop worker-mailer's read loop. */
  abort(): void {
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
 * Past `waitMs` the answer is a transient outcome and the connection is dropped, so a message that was
 * not through yet is not sent late (one whose final "." was already written may still arrive).
 */
export async function sendOnce(
  config: SmtpConfig,
  mail: OutgoingMail,
  pending = startConnecting(config),
  waitMs = config.timeoutMs,
): Promise<SmtpOutcome> {
  const exchange = (async (): Promise<SmtpOutcome> => {
    const connection = await pending;
    if (!(connection instanceof SmtpConnection)) return connection;
    try {
      return await connection.send(mail);
    } finally {
      waitUntil(connection.close());
    }
  })();
  try {
    return await withTimeout(exchange, waitMs, 'waiting for the SMTP server');
  } catch (error) {
    waitUntil(pending.then((connection) => (connection instanceof SmtpConnection ? connection.abort() : undefined)));
    return classifySmtpError(error);
  }
}
