// One SMTP session on `cloudflare:sockets`: the socket, the greeting, EHLO (HELO when EHLO is refused),
// STARTTLS and AUTH, then commands and replies until QUIT. What a message needs (the envelope, DATA) is
// the connection's business (connection.ts); every exchange runs under one timer (`bounded`).
import { connect } from 'cloudflare:sockets';
import { waitUntil } from 'cloudflare:workers';
import { toBase64 } from '../../base64';
import type { SmtpConfig } from '../../config';
import { oneLine, type Reply, ReplyReader } from './replies';

/** What the server offers after its last EHLO (after STARTTLS, the second one counts). */
export type Capabilities = {
  pipelining: boolean;
  startTls: boolean;
  /** AUTH mechanisms, upper case. */
  auth: string[];
  /** The largest message the server takes (SIZE), or null when it names none. */
  size: number | null;
  dsn: boolean;
};

const NONE: Capabilities = { pipelining: false, startTls: false, auth: [], size: null, dsn: false };

/** The keywords of an EHLO reply (RFC 5321 §4.1.1.1): every line after the first is one extension. */
export function parseCapabilities(ehlo: string): Capabilities {
  const lines = ehlo
    .split(/\r?\n/)
    .slice(1)
    .map((line) => line.slice(4).trim().toUpperCase())
    .filter(Boolean);
  const params = (keyword: string) =>
    lines
      .filter((line) => line === keyword || line.startsWith(`${keyword} `) || line.startsWith(`${keyword}=`))
      .flatMap((line) => line.slice(keyword.length + 1).split(/\s+/))
      .filter(Boolean);
  const has = (keyword: string) => lines.some((line) => line === keyword || line.startsWith(`${keyword} `));
  const size = Number(params('SIZE')[0]);
  return {
    pipelining: has('PIPELINING'),
    startTls: has('STARTTLS'),
    auth: params('AUTH'),
    size: size > 0 ? size : null,
    dsn: has('DSN'),
  };
}

/** The time of an exchange ran out; the socket was closed. */
export class SmtpTimeout extends Error {}

/**
 * The session could not be set up (greeting, EHLO, STARTTLS, AUTH): the route, not the message, failed.
 * `inStep`: the server refused with a complete reply and still listens, so it is owed a QUIT.
 */
export class HandshakeFailed extends Error {
  constructor(
    message: string,
    readonly inStep = true,
  ) {
    super(message);
  }
}

/** A refused step; after a 421 the server is closing the connection itself (RFC 5321 §3.8): no QUIT. */
const refused = (reply: Reply, what: string) =>
  new HandshakeFailed(`${what}: ${oneLine(reply.text)}`, reply.code !== 421);

/** How long a failed session waits for the answer to its QUIT. */
const QUIT_TIMEOUT_MS = 2_000;

const encoder = new TextEncoder();

/** Base64 of UTF-8 text (AUTH takes credentials as bytes; `btoa` alone stops at Latin-1). */
const base64 = (text: string) => toBase64(encoder.encode(text));

export class SmtpSession {
  capabilities: Capabilities = NONE;
  private replies: ReplyReader;
  private writer: WritableStreamDefaultWriter<Uint8Array>;
  private closed = false;

  private constructor(private socket: Socket) {
    this.replies = new ReplyReader(socket.readable.getReader());
    this.writer = socket.writable.getWriter();
  }

  /** Connects and sets the session up (greeting, EHLO, STARTTLS, AUTH) within the config's timeout. */
  static async open(config: SmtpConfig): Promise<SmtpSession> {
    const secureTransport = config.security === 'tls' ? 'on' : config.security === 'starttls' ? 'starttls' : 'off';
    const session = new SmtpSession(
      connect({ hostname: config.host, port: config.port }, { secureTransport, allowHalfOpen: false }),
    );
    try {
      await session.bounded(config.timeoutMs, 'connecting', () => session.handshake(config));
    } catch (error) {
      // A server that refused a step is told so (Postfix logs a connection dropped without QUIT as lost);
      // the caller does not wait for that. A timeout, a hang-up or a session out of step just goes.
      if (error instanceof HandshakeFailed && error.inStep) {
        waitUntil(session.quit(Math.min(QUIT_TIMEOUT_MS, config.timeoutMs)));
      } else session.abort();
      throw error;
    }
    return session;
  }

  get usable(): boolean {
    return !this.closed;
  }

  /**
   * Runs one exchange under one timer: past `ms` the socket is closed (which ends any read or write still
   * waiting) and the exchange fails with `SmtpTimeout`.
   */
  async bounded<T>(ms: number, what: string, exchange: () => Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.abort();
        reject(new SmtpTimeout(`timeout after ${ms} ms while ${what}`));
      }, ms);
    });
    try {
      return await Promise.race([exchange(), timeout]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  private async handshake(config: SmtpConfig): Promise<void> {
    await this.socket.opened;
    const greeting = await this.read();
    if (greeting.code !== 220) throw refused(greeting, 'the SMTP server refused the session');
    await this.hello(config.ehloName);
    if (config.security === 'starttls') {
      if (!this.capabilities.startTls) {
        throw new HandshakeFailed(
          'the SMTP server does not offer STARTTLS (SMTP_SECURE=starttls): refusing to continue in plaintext',
        );
      }
      await this.startTls();
      await this.hello(config.ehloName);
    }
    if (config.credentials) await this.authenticate(config.credentials);
  }

  /** EHLO, or HELO (no extensions) when the server does not know EHLO; a 421 ends the session. */
  private async hello(name: string): Promise<void> {
    const ehlo = await this.command(`EHLO ${name}`);
    if (ehlo.code === 250) {
      this.capabilities = parseCapabilities(ehlo.text);
      return;
    }
    if (ehlo.code === 421) throw refused(ehlo, 'EHLO refused');
    const helo = await this.command(`HELO ${name}`);
    if (helo.code !== 250) throw refused(helo, 'HELO refused');
    this.capabilities = NONE;
  }

  /**
   * Anything the server sent after its 220 came in plaintext and must never be read as a reply over TLS
   * (someone on the path could have injected it, RFC 3207 §6): such a session is refused.
   */
  private async startTls(): Promise<void> {
    const reply = await this.command('STARTTLS');
    if (reply.code !== 220) throw refused(reply, 'STARTTLS refused');
    if (this.replies.buffered) {
      throw new HandshakeFailed('the SMTP server sent more after its 220 to STARTTLS: refusing the connection', false);
    }
    this.replies.release();
    this.writer.releaseLock();
    this.socket = this.socket.startTls();
    this.replies = new ReplyReader(this.socket.readable.getReader());
    this.writer = this.socket.writable.getWriter();
    this.capabilities = NONE;
  }

  /** AUTH PLAIN where offered, else LOGIN; credentials are never sent to a server that offers neither. */
  private async authenticate({ username, password }: { username: string; password: string }): Promise<void> {
    const offered = this.capabilities.auth;
    let reply: Reply;
    if (offered.includes('PLAIN')) {
      reply = await this.command(`AUTH PLAIN ${base64(`\0${username}\0${password}`)}`);
    } else if (offered.includes('LOGIN')) {
      reply = await this.command('AUTH LOGIN');
      if (reply.code === 334) reply = await this.command(base64(username));
      if (reply.code === 334) reply = await this.command(base64(password));
    } else {
      throw new HandshakeFailed(
        `the SMTP server offers no AUTH PLAIN or LOGIN (${offered.join(' ') || 'no AUTH at all'}): credentials not sent`,
      );
    }
    if (reply.code !== 235) throw refused(reply, 'authentication failed');
  }

  async write(data: string): Promise<void> {
    await this.writer.write(encoder.encode(data));
  }

  read(): Promise<Reply> {
    return this.replies.next();
  }

  async command(line: string): Promise<Reply> {
    await this.write(`${line}\r\n`);
    return this.read();
  }

  /** QUIT, answered or not, then the socket goes. */
  async quit(ms: number): Promise<void> {
    if (this.closed) return;
    await this.bounded(ms, 'closing', () => this.command('QUIT')).catch(() => undefined);
    this.abort();
  }

  /** Drops the socket: the session's state is unknown (a failure, a timeout) or it is done. */
  abort(): void {
    if (this.closed) return;
    this.closed = true;
    this.replies.release();
    try {
      this.writer.releaseLock();
    } catch {}
    this.socket.close().catch(() => undefined);
  }
}
