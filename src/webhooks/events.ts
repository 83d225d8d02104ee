// The events postcode pushes to an account's webhook endpoints, and who may subscribe to them.
import type { Scope } from '../db/credentials';

export const EVENT_TYPES = [
  'email.queued',
  'email.sent',
  'email.deferred',
  'email.failed',
  'email.suppressed',
  'email.canceled',
  'otp.sent',
  'otp.verified',
  'otp.locked',
  'email_verification.verified',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** What `POST /api/v1/webhooks/{webhookId}/test` sends; nobody subscribes to it. */
export const TEST_EVENT = 'webhook.test' as const;

/** `email.*` needs a key with `mail_api`; `otp.*` and `email_verification.*` need `server_otp`. */
export const scopeOfEvent = (type: EventType): Scope => (type.startsWith('email.') ? 'mail_api' : 'server_otp');

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
};
export type OtpEventData = { sessionId: string; email: string; channel: string };

/** One event before it is stored: the payload is `{ type, createdAt, data }` (never a code, hash or key). */
export type WebhookEvent =
  | { type: Extract<EventType, `email.${string}`>; data: EmailEventData }
  | { type: Exclude<EventType, `email.${string}`>; data: OtpEventData };
