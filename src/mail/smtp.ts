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

/** One SMTP connection; send several messages over it, then close. */
export class SmtpConnection {
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

  async send(mail: OutgoingMail): Promise<SmtpOutcome> {
    try {
      await withTimeout(
        this.mailer.send({
          from: mail.from.name ? { email: mail.from.email, name: mail.from.name } : mail.from.email,
          to: mail.to,
          subject: mail.subject,
          html: mail.html ?? undefined,
          text: mail.text ?? undefined,
          headers: { 'Message-ID': mail.messageId },
        }),
        this.config.timeoutMs,
        'sending',
      );
      return { kind: 'accepted' };
    } catch (error) {
      return classifySmtpError(error);
    }
  }

  async close(): Promise<void> {
    await withTimeout(this.mailer.close(), 2_000, 'closing').catch(() => undefined);
  }
}

/** Opens a connection, sends one message, closes. Connection failures come back as outcomes too. */
export async function sendOnce(config: SmtpConfig, mail: OutgoingMail): Promise<SmtpOutcome> {
  let connection: SmtpConnection;
  try {
    connection = await SmtpConnection.open(config);
  } catch (error) {
    return classifySmtpError(error);
  }
  try {
    return await connection.send(mail);
  } finally {
    await connection.close();
  }
}
