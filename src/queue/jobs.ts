// The jobs the queues carry, and how a consumer holds one: types only, shared by the producers, the
// consumer and the functions it runs per kind (src/queue/consumer.ts), so that none imports another's code.
import type { Mailbox } from '../config';
import type { Language } from '../otp/languages';
import type { OtpChannel, VerificationEntry } from '../otp/session';

/** A queue message of `postcode-webhooks`: ids only; the account's object holds the payload and the state. */
export type WebhookJob = { kind: 'webhook'; accountId: string; deliveryId: string };

/** The queue carries only ids: the row in the account's object is the truth for content and status. */
export type EmailJob = { kind: 'email'; accountId: string; emailId: string };

/**
 * An OTP mail that could not go out within the request. It carries no code: the retry sets a fresh
 * code on the session and mails that one.
 */
export type OtpRetryJob = {
  kind: 'otp-retry';
  sessionId: string;
  accountId: string;
  /** The flavour, for the `otp.sent` event. */
  channel: OtpChannel;
  email: string;
  subject: string;
  verificationLine?: string;
  digits: number;
  expiresAt: number;
  from: Mailbox;
  /** The mail's language (absent: English). */
  language?: Language;
  /** The account's saved template the mail is made from. */
  templateId?: string;
};

/**
 * The history row of a verification whose write failed during the request (the session was already
 * consumed, so the verify still answered success).
 */
export type VerificationHistoryJob = { kind: 'otp-history'; entry: VerificationEntry };

/** What the producers send (webhook jobs go on their own queue, `postcode-webhooks`). */
export type MailJob = EmailJob | OtpRetryJob | VerificationHistoryJob | WebhookJob;
export type JobKind = MailJob['kind'];

/** A message of the batch and its job. */
export type Delivery<J extends MailJob> = { message: Message<unknown>; job: J };
/** Puts a message back on the queue after the configured backoff. */
export type Retry = (message: Message<unknown>) => void;
