// The vocabulary of OTP sessions, shared by the engine, the recipient objects, the mail and the history:
// types only, so that every layer can name them without importing another layer's code.
import type { RateDecision } from '../durable-objects/hit-logs';
import type { Language } from './languages';

export type OtpChannel = 'instant' | 'backend' | 'email_verification';

/** How a session's codes are mailed, kept so that a resend looks like the first mail. */
export type OtpMailSettings = {
  subject: string;
  verificationLine?: string;
  from: { email: string; name: string | null };
  /** The language of the mail (absent: English). */
  language?: Language;
  /** The account's saved template the mail is made from (read again for each mail: its text is not kept). */
  templateId?: string;
};

export type NewOtpSession = {
  sessionId: string;
  accountId: string;
  channel: OtpChannel;
  email: string;
  codeHash: string;
  digits: number;
  expiresAt: number;
  maxAttempts: number;
  mail: OtpMailSettings;
  /** HMAC of the one-click link's token (email verification). */
  linkHash?: string;
};

/** What a resend needs of a session: its code length, expiry and mail settings (null: none kept). */
export type ResendableSession = { digits: number; expiresAt: number; mail: OtpMailSettings | null };

export type VerifyAttempt = {
  sessionId: string;
  /** null: the hosted page, which has no credential (the channel still has to match). */
  accountId: string | null;
  channel: OtpChannel;
  email: string;
  codeLength: number;
  codeHash: string;
  /** Set: the proof is the one-click link's token (its HMAC), not a code; the session's own address counts. */
  linkHash?: string;
};

export type VerifyOutcome =
  | { result: 'verified'; accountId: string; email: string; sentAt: number; verifiedAt: number }
  | { result: 'wrong'; attemptsLeft: number; accountId: string; email: string }
  | { result: 'malformed' }
  | { result: 'locked'; retryAfterSeconds: number }
  | { result: 'limited'; decision: RateDecision }
  | { result: 'expired' }
  | { result: 'not_found' };

export type SessionStatus = {
  accountId: string;
  email: string;
  status: 'pending' | 'verified' | 'locked' | 'expired';
  expiresAt: number;
  verifiedAt: number | null;
  /** The language of its mail, when the send named one. */
  language?: Language;
};

/** A verified session as OTP history keeps it (written to D1 by the engine or the object's outbox). */
export type VerificationEntry = {
  accountId: string;
  channel: OtpChannel;
  sessionId: string;
  email: string;
  sentAt: string;
  verifiedAt: string;
};
