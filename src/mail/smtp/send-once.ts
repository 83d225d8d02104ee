// One message over a connection of its own, for OTP code mail (sent in the request, or from a queued job):
// the handshake can start before the message is ready, and the wait for the answer is bounded.
import { waitUntil } from 'cloudflare:workers';
import type { SmtpConfig } from '../../config';
import type { OutgoingMail } from '../outgoing';
import { classifySmtpError, SmtpConnection, type SmtpFailure, type SmtpOutcome } from './connection';

/** A connection being opened (greeting, EHLO, STARTTLS, AUTH), or why that failed. */
export type PendingConnection = Promise<SmtpConnection | SmtpFailure>;

/** Starts opening a connection now, so the SMTP handshake overlaps other work of the request. */
export function startConnecting(config: SmtpConfig): PendingConnection {
  return SmtpConnection.open(config).catch(classifySmtpError);
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
  pending: PendingConnection = startConnecting(config),
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
  return withinTime(exchange, waitMs, () => {
    waitUntil(pending.then((connection) => (connection instanceof SmtpConnection ? connection.abort() : undefined)));
    return {
      kind: 'transient',
      reply: `timeout after ${waitMs} ms while waiting for the SMTP server`,
      routeFault: true,
    };
  });
}

/**
 * The outcome of `work`, or past `ms` the transient route fault `late` makes (the work may still finish; its
 * result is not waited for).
 */
export async function withinTime<T>(work: Promise<T>, ms: number, late: () => T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late()), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
