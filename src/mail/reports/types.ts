import type { BounceReason, BounceType } from '../bounce-reasons';

export type ReportKind = 'bounced' | 'deferred' | 'delivered' | 'complained';

/** One recipient a report speaks of, and what happened to it. */
export type ReportedRecipient = {
  /**
   * The address as the report names it; null when the report names none (a provider that redacts the
   * complainant, a notice that names no address): then it can only mean an email's only recipient.
   */
  address: string | null;
  /** Other addresses the report gives for the same recipient (Final- beside Original-Recipient, a forward). */
  alternates?: string[];
  kind: ReportKind;
  bounceType?: BounceType;
  bounceReason?: BounceReason;
  diagnostic: string | null;
};

/** What a report says, and the Message-ID of the message it returns (when its headers came back). */
export type Report = { recipients: ReportedRecipient[]; messageId: string | null };
