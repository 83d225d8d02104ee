import type { Mailbox } from '../config';
import { clearHeld, deleteEmail, insertEmail, listHeldEmailIds, type NewEmail } from '../db/emails';
import type { VerificationEntry } from '../db/otp-history';
import type { Bindings } from '../env';

/** The queue carries only the id: the row in D1 is the single source of truth for content and status. */
export type EmailJob = { emailId: string };

/**
 * An OTP mail that could not go out within the request. It carries no code: the retry sets a fresh
 * code on the session and mails that one.
 */
export type OtpRetryJob = {
  kind: 'otp';
  sessionId: string;
  accountId: string;
  email: string;
  subject: string;
  verificationLine?: string;
  digits: number;
  expiresAt: number;
  from: Mailbox;
};

/**
 * The history row of a verification whose D1 write failed during the request (the session was
 * already consumed, so the verify still answered success).
 */
export type VerificationHistoryJob = { kind: 'otp-history'; entry: VerificationEntry };

export type MailJob = EmailJob | OtpRetryJob | VerificationHistoryJob;

const job = (emailId: string) => ({ body: { emailId } satisfies EmailJob, contentType: 'json' as const });

/**
 * Stores the email as QUEUED and hands it to the delivery queue; nothing is left behind if either
 * step fails. A held email (freeze mode) gets no queue message until the operator unfreezes; the
 * freeze is read in the same transaction as the insert, so an unfreeze cannot slip in between.
 * Returns false when the `gate` (the daily allowance) refused the email.
 */
export async function enqueueEmail(
  env: Bindings,
  email: NewEmail,
  gate?: { reserve: D1PreparedStatement; release: () => Promise<void> },
): Promise<boolean> {
  const { stored, held } = await insertEmail(env.DB, email, { gate: gate?.reserve });
  if (!stored) return false;
  if (held) return true;
  try {
    await env.MAIL_QUEUE.send({ emailId: email.id } satisfies EmailJob, { contentType: 'json' });
  } catch (error) {
    // The transaction committed; undo it by hand (the row, and the allowance it reserved).
    await deleteEmail(env.DB, email.id);
    await gate?.release();
    throw error;
  }
  return true;
}

/**
 * Queues every held email, oldest first, 100 per queue batch. A held row is cleared only after its
 * message was produced, so a failure part-way leaves the rest held for the next release (nothing is
 * lost; a duplicate message is harmless because the consumer leases and checks status).
 */
export async function releaseHeldMail(env: Bindings): Promise<number> {
  let released = 0;
  for (;;) {
    const ids = await listHeldEmailIds(env.DB, 100);
    if (ids.length === 0) return released;
    await env.MAIL_QUEUE.sendBatch(ids.map(job));
    await clearHeld(env.DB, ids);
    released += ids.length;
  }
}
