// Messages over an SMTP session: the envelope (pipelined where the server offers it), each recipient's
// answer, the message postcode composed (mime.ts) and the server's verdict on it, as an outcome.
import type { SmtpConfig } from '../../config';
import { bodyHash, dkimSignature } from '../dkim';
import { AttachmentReadFailed, type MessageFrame, messageChunks, messageParts, newFrame } from '../mime';
import type { OutgoingMail, RecipientRefusal } from '../outgoing';
import { ConnectionClosed, oneLine, type Reply } from './replies';
import { HandshakeFailed, SmtpSession, SmtpTimeout } from './session';
import { estimatedSize } from './size';

/**
 * accepted: the server took the message (250 after DATA) for every recipient not in `refused`.
 * permanent: a 5xx reply. transient: 4xx, network fault or timeout; the message may be retried (a
 * timeout after the final "." can mean the server took it, which is why every email keeps one
 * Message-ID). `refused` lists the recipients refused at RCPT TO before the outcome (empty if none).
 * `routeFault`: the route failed, not the message (refused, reset or silent connection, a failed
 * handshake or TLS, 421, a 4xx to MAIL FROM): the same attempt may go on through the next route.
 */
export type SmtpOutcome =
  | { kind: 'accepted'; refused?: RecipientRefusal[] }
  | { kind: 'permanent'; reply: string; refused?: RecipientRefusal[] }
  | { kind: 'transient'; reply: string; refused?: RecipientRefusal[]; routeFault?: boolean };

export type SmtpFailure = Exclude<SmtpOutcome, { kind: 'accepted' }>;

/** `routeFault: true` where it holds, nothing otherwise (an outcome names only a fault it has). */
const routeFaultIf = (fault: boolean) => (fault ? { routeFault: true } : {});

/**
 * The outcome of a message some of whose `total` recipients were refused: accepted for the rest, else the
 * refusals decide (a transient one first: the message may still reach that recipient later).
 */
export function outcomeOfRefusals(total: number, refused: RecipientRefusal[]): SmtpOutcome {
  if (refused.length < total) return { kind: 'accepted', refused };
  const deciding = refused.find((r) => !r.permanent) ?? refused[0]!;
  if (deciding.permanent) return { kind: 'permanent', reply: deciding.reply, refused };
  return { kind: 'transient', reply: deciding.reply, refused, ...routeFaultIf(deciding.reply.startsWith('421')) };
}

/**
 * Sending a message with attachments may take longer than one SMTP exchange (10 MB over a slow relay); the
 * delivery lease (60 s) still covers a connect (15 s) and such a send.
 */
const ATTACHMENT_SEND_TIMEOUT_MS = 40_000;
const CLOSE_TIMEOUT_MS = 2_000;
/** Small pieces of the message are gathered into writes of up to 64 KiB: one write for an ordinary message. */
const WRITE_SIZE = 64 * 1024;

/**
 * An error's outcome: a failed session set-up, a timeout or an attachment that could not be read is
 * transient (the route or the moment failed, not the message); otherwise the reply code it names decides.
 */
export function classifySmtpError(error: unknown): SmtpFailure {
  const message = error instanceof Error ? error.message : String(error);
  const reply = oneLine(message);
  if (error instanceof AttachmentReadFailed) return { kind: 'transient', reply };
  if (error instanceof SmtpTimeout || error instanceof HandshakeFailed) {
    return { kind: 'transient', reply, routeFault: true };
  }
  const code = message.match(/(?:^|\s)([245]\d\d)(?:[ -]|$)/m)?.[1];
  if (code?.startsWith('5')) return { kind: 'permanent', reply };
  // A reply code other than 421 is the server's word on the message; no code: the network failed.
  return { kind: 'transient', reply, ...routeFaultIf(code === undefined || code === '421') };
}

/**
 * A 5xx refuses the message for good, except 530 (authentication required): that is about the session
 * (credentials missing or not accepted), and the message may go once the route is put right.
 */
const isPermanent = (reply: Reply) => reply.code >= 500 && reply.code !== 530;

/** A refused step; `beforeRecipients`: MAIL FROM, whose 4xx is the route's fault like a 421 anywhere. */
const failure = (reply: Reply, refused: RecipientRefusal[], what = '', beforeRecipients = false): SmtpFailure =>
  isPermanent(reply)
    ? { kind: 'permanent', reply: oneLine(`${what}${reply.text}`), refused }
    : {
        kind: 'transient',
        reply: oneLine(`${what}${reply.text}`),
        refused,
        ...routeFaultIf(beforeRecipients || reply.code === 421),
      };

/** Each attachment's content opened for one writing of the message, or the failure of one that is gone. */
async function openContents(mail: OutgoingMail): Promise<ReadableStream<Uint8Array>[] | SmtpFailure> {
  const contents: ReadableStream<Uint8Array>[] = [];
  for (const attachment of mail.attachments ?? []) {
    const content = await attachment.open();
    if (!content) {
      await Promise.all(contents.map((c) => c.cancel().catch(() => undefined)));
      return { kind: 'permanent', reply: `attachment ${attachment.filename}: content no longer available` };
    }
    contents.push(content);
  }
  return contents;
}

/**
 * The DKIM-Signature of `mail` as `frame` writes it: the body is written once to be hashed (attachments read
 * from their source as they stream, never held whole), and the same bytes are written again to be sent.
 */
async function signatureOf(mail: OutgoingMail, frame: MessageFrame): Promise<string | SmtpFailure> {
  const contents = await openContents(mail);
  if (!Array.isArray(contents)) return contents;
  const { head, body } = messageParts(mail, contents, frame);
  return dkimSignature(mail.dkim!, head, await bodyHash(body()));
}

/** One SMTP connection; send several messages over it, one at a time, then close. */
export class SmtpConnection {
  /** The recipients refused at RCPT TO in the message being sent (kept when a later step fails). */
  private refused: RecipientRefusal[] = [];

  private constructor(
    private readonly session: SmtpSession,
    private readonly config: SmtpConfig,
  ) {}

  static async open(config: SmtpConfig): Promise<SmtpConnection> {
    return new SmtpConnection(await SmtpSession.open(config), config);
  }

  /** The server offers PIPELINING (after STARTTLS, as the second EHLO said). */
  get pipelining(): boolean {
    return this.session.capabilities.pipelining;
  }

  /** False once a failure or a timeout left the session in an unknown state (the socket is gone). */
  get usable(): boolean {
    return this.session.usable;
  }

  async send(mail: OutgoingMail): Promise<SmtpOutcome> {
    if (!this.usable)
      return {
        kind: 'transient',
        reply: 'the SMTP connection was closed after a failure',
        refused: [],
        routeFault: true,
      };
    const frame = newFrame();
    let signature: string | undefined;
    if (mail.dkim) {
      const signed = await signatureOf(mail, frame).catch(classifySmtpError);
      if (typeof signed !== 'string') return { ...signed, refused: [] };
      signature = signed;
    }
    const contents = await openContents(mail);
    if (!Array.isArray(contents)) return contents;
    const ms = (mail.attachments ?? []).length > 0 ? ATTACHMENT_SEND_TIMEOUT_MS : this.config.timeoutMs;
    this.refused = [];
    try {
      return await this.session.bounded(ms, 'sending', () => this.transaction(mail, contents, frame, signature));
    } catch (error) {
      // A dropped connection, a late reply, a message that could not be read: the session is out of step.
      this.session.abort();
      return { ...classifySmtpError(error), refused: this.refused };
    } finally {
      // Content not sent (every recipient refused, a failure): let its source go.
      await Promise.all(contents.map((c) => (c.locked ? undefined : c.cancel().catch(() => undefined))));
    }
  }

  /**
   * MAIL FROM, every RCPT TO and DATA: in one write where the server offers PIPELINING (their replies read
   * in order), else one at a time, stopping after a refused sender or before DATA when no recipient is
   * left. Every reply is read before the outcome, so the session stays in step; a refused transaction is
   * reset (RSET) for the next message.
   */
  private async transaction(
    mail: OutgoingMail,
    contents: ReadableStream<Uint8Array>[],
    frame: MessageFrame,
    signature: string | undefined,
  ): Promise<SmtpOutcome> {
    const { capabilities } = this.session;
    const recipients = mail.envelopeTo ?? mail.to;
    // Only a server that names a limit gets an estimate (it encodes the bodies once more).
    const size = capabilities.size === null ? null : estimatedSize(mail);
    if (size !== null && size > capabilities.size!) {
      const reply = `552 5.3.4 the message (about ${size} bytes) is larger than the server takes (SIZE ${capabilities.size})`;
      return { kind: 'permanent', reply, refused: [] };
    }
    // Bounces are asked for (DSN) only when they come back to postcode's return path; otherwise the
    // envelope sender is the From address, whose owner did not ask for postcode's bounces.
    const notify = capabilities.dsn ? (mail.envelopeFrom ? ' NOTIFY=FAILURE,DELAY' : ' NOTIFY=NEVER') : '';
    const commands = [
      `MAIL FROM:<${mail.envelopeFrom ?? mail.from.email}>${size !== null ? ` SIZE=${size}` : ''}`,
      ...recipients.map((email) => `RCPT TO:<${email}>${notify}`),
      'DATA',
    ];
    const replies = capabilities.pipelining ? await this.pipelined(commands) : await this.lockstep(commands);
    const [mailReply, ...rest] = replies;
    const dataReply = rest[recipients.length];
    if (mailReply!.code !== 250) {
      // After a refused MAIL FROM, the RCPT replies (503, bad sequence) say nothing about the recipients.
      if (dataReply?.code === 354) await this.endEmptyMessage();
      await this.reset();
      return failure(mailReply!, [], `${commands[0]} refused: `, true);
    }
    const refused = rest
      .slice(0, recipients.length)
      .flatMap((reply, i) =>
        reply.code === 250 || reply.code === 251
          ? []
          : [{ email: recipients[i]!, reply: oneLine(reply.text), permanent: isPermanent(reply) }],
      );
    this.refused = refused;
    if (refused.length === recipients.length) {
      // A server may answer a pipelined DATA with 354 although nothing can be delivered: end it empty.
      if (dataReply?.code === 354) await this.endEmptyMessage();
      await this.reset();
      return outcomeOfRefusals(recipients.length, refused);
    }
    if (dataReply?.code !== 354) {
      await this.reset();
      return failure(dataReply ?? { code: 451, text: 'no reply to DATA' }, refused, 'DATA refused: ');
    }
    const verdict = await this.writeMessage(messageChunks(mail, contents, frame, signature));
    if (verdict.code !== 250) {
      await this.reset();
      return failure(verdict, refused);
    }
    return { kind: 'accepted', refused };
  }

  private async pipelined(commands: string[]): Promise<Reply[]> {
    await this.session.write(commands.map((command) => `${command}\r\n`).join(''));
    const replies: Reply[] = [];
    for (const _command of commands) {
      try {
        replies.push(await this.session.read());
      } catch (error) {
        // A server may hang up after refusing the sender: that refusal decides, not the closed connection.
        if (error instanceof ConnectionClosed && replies[0] !== undefined && replies[0].code !== 250) {
          this.session.abort();
          break;
        }
        throw error;
      }
    }
    return replies;
  }

  private async lockstep(commands: string[]): Promise<Reply[]> {
    const replies: Reply[] = [];
    for (const [index, command] of commands.entries()) {
      if (command === 'DATA' && replies.slice(1).every((r) => r.code !== 250 && r.code !== 251)) break;
      const reply = await this.session.command(command);
      replies.push(reply);
      if (index === 0 && reply.code !== 250) break;
    }
    return replies;
  }

  /** The message, chunk by chunk (attachments stream from R2), then the server's verdict on it. */
  private async writeMessage(chunks: AsyncIterable<string>): Promise<Reply> {
    let pending = '';
    for await (const chunk of chunks) {
      pending += chunk;
      if (pending.length >= WRITE_SIZE) {
        await this.session.write(pending);
        pending = '';
      }
    }
    if (pending) await this.session.write(pending);
    return this.session.read();
  }

  private async endEmptyMessage(): Promise<void> {
    await this.session.write('.\r\n');
    await this.session.read();
  }

  /** RSET after a refused transaction; a session that cannot even reset is dropped. */
  private async reset(): Promise<void> {
    if (!this.usable) return;
    const reply = await this.session.command('RSET').catch(() => null);
    if (reply?.code !== 250) this.session.abort();
  }

  /** After a failure the session state is unknown: drop the socket. */
  abort(): void {
    this.session.abort();
  }

  /** QUIT (bounded), then the socket goes. */
  async close(): Promise<void> {
    await this.session.quit(CLOSE_TIMEOUT_MS);
  }
}
