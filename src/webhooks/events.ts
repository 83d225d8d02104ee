// The events postcode pushes to an account's webhook endpoints, and who may subscribe to them.

import type { BounceReason, BounceType } from '../mail/bounce-reasons';
import type { Scope } from '../store/control/credentials';

export const EVENT_TYPES = [
  'email.queued',
  'email.sent',
  'email.deferred',
  'email.failed',
  'email.suppressed',
  'email.canceled',
  'email.delivered',
  'email.bounced',
  'email.complained',
  'email.received',
  'otp.sent',
  'otp.verified',
  'otp.locked',
  'email_verification.verified',
  'domain.verified',
  'domain.failed',
  'sender.verified',
  'suppression.added',
  'suppression.removed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** What `POST /api/v1/webhooks/{webhookId}/test` sends; nobody subscribes to it. */
export const TEST_EVENT = 'webhook.test' as const;

/** Mail's events (`email.*`, `domain.*`, `sender.*`, `suppression.*`) need `mail_api`; OTP's need `server_otp`. */
export const scopeOfEvent = (type: EventType): Scope =>
  /^(email|domain|sender|suppression)\./.test(type) ? 'mail_api' : 'server_otp';

export type EmailEventData = {
  emailId: string;
  to: string[];
  subject: string;
  status: string;
  tags: { name: string; value: string }[];
  /** Queued with a test key (its mail never reaches SMTP). */
  test: boolean;
  recipient?: string;
  reply?: string;
  /** The delivery route of the outcome (null for test mail, which no route carries). */
  route?: string | null;
  /** email.bounced: hard, soft or undetermined (only hard suppresses the address). */
  bounceType?: BounceType;
  /** email.bounced: why (src/mail/bounce-reasons.ts). */
  bounceReason?: BounceReason;
  /** email.delivered, email.bounced, email.complained, email.deferred after the relay: the report's words. */
  diagnostic?: string;
};
export type OtpEventData = { sessionId: string; email: string; channel: string };
export type DomainEventData = { domainId: string; name: string; status: string };
export type SenderEventData = { senderId: string; email: string; status: string };
export type SuppressionEventData = {
  email: string;
  reason: string;
  emailId: string | null;
  expiresAt: string | null;
};

export type MailboxData = { address: string; name: string };
export type Authentication = 'pass' | 'fail' | 'none' | 'unknown';

/** What a received message says of itself, parsed: kept with the message and sent in `email.received`. */
export type ParsedInbound = {
  from: MailboxData | null;
  toList: MailboxData[];
  cc: MailboxData[];
  replyTo: MailboxData[];
  subject: string | null;
  date: string | null;
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  /** The account's sent email it replies to. */
  emailId: string | null;
  text: string | null;
  html: string | null;
  authentication: { spf: Authentication; dkim: Authentication; dmarc: Authentication };
};

/** email.received: the parsed message and where to read the rest (paths under the service's base URL). */
export type InboundEventData = ParsedInbound & {
  inboundId: string;
  to: string;
  attachments: { index: number; filename: string | null; contentType: string; size: number; url: string }[];
  url: string;
  rawUrl: string;
};

/** One event before it is stored: the payload is `{ type, createdAt, data }` (never a code, hash or key). */
export type WebhookEvent =
  | { type: Exclude<Extract<EventType, `email.${string}`>, 'email.received'>; data: EmailEventData }
  | { type: 'email.received'; data: InboundEventData }
  | { type: Extract<EventType, `domain.${string}`>; data: DomainEventData }
  | { type: 'sender.verified'; data: SenderEventData }
  | { type: Extract<EventType, `suppression.${string}`>; data: SuppressionEventData }
  | { type: Extract<EventType, `otp.${string}` | `email_verification.${string}`>; data: OtpEventData };
