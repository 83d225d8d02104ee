// The document's `webhooks` section: what postcode POSTs to an endpoint for each event.
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import { bounceReason, bounceType } from '../schemas/emails';
import { EVENT_TYPES, type EventType, TEST_EVENT } from '../webhooks/events';

const emailData = z.object({
  emailId: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  status: z
    .enum(['SCHEDULED', 'QUEUED', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED', 'SUPPRESSED', 'CANCELED'])
    .openapi({ description: "The email's status after the fact" }),
  tags: z.array(z.object({ name: z.string(), value: z.string() })).openapi({ description: "The email's tags" }),
  test: z.boolean().openapi({ description: 'Queued with a test key: simulated, never sent over SMTP' }),
  recipient: z.string().optional().openapi({ description: 'The recipient this outcome is about' }),
  reply: z.string().optional().openapi({ description: "The SMTP server's reply (deferred, failed)" }),
  route: z
    .string()
    .nullable()
    .optional()
    .openapi({ description: 'The delivery route (MAIL_ROUTES name) of the outcome; null for test mail' }),
  bounceType: bounceType.optional(),
  bounceReason: bounceReason.optional(),
  diagnostic: z
    .string()
    .optional()
    .openapi({ description: "After the relay: the report's words (a DSN's Diagnostic-Code, the provider's reply)" }),
});
const suppressionData = z.object({
  email: z.string().openapi({ description: 'The canonical address' }),
  reason: z.enum(['hard_bounce', 'complaint', 'rcpt_rejected', 'manual']),
  emailId: z.string().nullable().openapi({ description: 'The email that caused it (null: added by hand)' }),
  expiresAt: z.string().nullable().openapi({ description: 'When it stops blocking (null: never)' }),
});
const otpData = z.object({
  sessionId: z.string(),
  email: z.string(),
  channel: z.enum(['instant', 'backend', 'email_verification']),
});

const domainData = z.object({
  domainId: z.string(),
  name: z.string().openapi({ description: 'The domain in its ASCII spelling' }),
  status: z.enum(['verified', 'partially_verified', 'failed']).openapi({ description: "The domain's new status" }),
});
const senderData = z.object({ senderId: z.string(), email: z.string(), status: z.literal('verified') });
const mailbox = z.object({ address: z.string(), name: z.string() });
const authentication = z.enum(['pass', 'fail', 'none', 'unknown']);
const inboundData = z.object({
  inboundId: z.string(),
  to: z.string().openapi({ description: 'The address it arrived at (the envelope recipient)' }),
  from: mailbox.nullable(),
  toList: z.array(mailbox).openapi({ description: 'The To header' }),
  cc: z.array(mailbox),
  replyTo: z.array(mailbox),
  subject: z.string().nullable().openapi({ description: 'Decoded' }),
  date: z.string().nullable(),
  messageId: z.string().nullable(),
  inReplyTo: z.string().nullable(),
  references: z.array(z.string()),
  emailId: z.string().nullable().openapi({ description: "The account's sent email it replies to (its thread)" }),
  text: z.string().nullable(),
  html: z.string().nullable(),
  authentication: z
    .object({ spf: authentication, dkim: authentication, dmarc: authentication })
    .openapi({ description: 'As the receiving hop reported it (Authentication-Results); unknown when it did not' }),
  attachments: z
    .array(
      z.object({
        index: z.number().int(),
        filename: z.string().nullable(),
        contentType: z.string(),
        size: z.number().int(),
        url: z.string().openapi({ description: 'Its bytes: GET with the key (a path under the base URL)' }),
      }),
    )
    .openapi({ description: 'Never the bytes: links to them' }),
  url: z.string().openapi({ description: 'The stored record: GET /api/v1/inbound/{inboundId}' }),
  rawUrl: z.string().openapi({ description: 'The message exactly as received' }),
});

const WHEN: Record<EventType | typeof TEST_EVENT, string> = {
  'email.queued':
    'An email was accepted and stored (routes 1, 3, 4, the batch); status SCHEDULED when it waits for its time.',
  'email.sent': 'The SMTP server accepted the message for one recipient.',
  'email.deferred': 'A recipient was refused for now (4xx or a network failure); it will be retried.',
  'email.failed': 'A recipient was refused for good (5xx), or still refused when the attempts ran out.',
  'email.suppressed': 'A recipient was skipped: it is on the suppression list.',
  'email.canceled': 'A scheduled email was canceled before its time.',
  'email.delivered':
    "The recipient's mail server took the message (reported after the relay: Cloudflare Email Service).",
  'email.bounced':
    'The message bounced for one recipient after the relay took it: `bounceType` hard (the address cannot receive: suppressed), soft or undetermined (never suppressed), and `bounceReason` why.',
  'email.complained': 'The recipient marked the message as spam (a feedback loop report).',
  'email.received':
    'Mail arrived at an address whose inbound route says `webhook`; auto-replies and delivery reports are stored, never sent as this event.',
  'suppression.added':
    'An address joined the suppression list: a hard bounce, a complaint, a 5xx at RCPT TO, or added by hand.',
  'suppression.removed': 'An address was removed from the suppression list.',
  'otp.sent': 'A one-time code was mailed (any flavour).',
  'otp.verified': 'A one-time code was verified (instant, legacy or backend).',
  'otp.locked': 'A session locked after its last wrong code.',
  'email_verification.verified': 'An email verification succeeded (JSON route or the hosted page).',
  'domain.verified':
    "A domain's DKIM record was found: status verified (return path found too) or partially_verified (mail is signed, the envelope uses the service's return path).",
  'domain.failed':
    "A domain failed: no DKIM record 72 h after it was added, or a verified domain's DKIM record disappeared.",
  'sender.verified': "A sender's address was confirmed (its hosted page), or it was added on a verified domain.",
  'webhook.test': 'POST /api/v1/webhooks/{webhookId}/test.',
};

const SIGNED = z.object({
  'webhook-id': z.string().openapi({ description: 'The delivery id, the same on every attempt' }),
  'webhook-timestamp': z.string().openapi({ description: 'Unix seconds of this attempt' }),
  'webhook-signature': z
    .string()
    .openapi({ description: 'v1,<base64 HMAC-SHA256> over `id.timestamp.body` (Standard Webhooks)' }),
});

export function registerWebhookEvents(app: OpenAPIHono<AppEnv>) {
  for (const type of [...EVENT_TYPES, TEST_EVENT]) {
    const data =
      type === 'email.received'
        ? inboundData
        : type.startsWith('email.')
          ? emailData
          : type.startsWith('domain.')
            ? domainData
            : type === 'sender.verified'
              ? senderData
              : type.startsWith('suppression.')
                ? suppressionData
                : type === TEST_EVENT
                  ? z.object({ webhookId: z.string() })
                  : otpData;
    app.openAPIRegistry.registerWebhook({
      method: 'post',
      path: type,
      summary: type,
      operationId: `webhook_${type.replace('.', '_')}`,
      // Not a bearer credential: the receiver checks webhook-signature with the endpoint's secret.
      security: [],
      description: `${WHEN[type]} Payload \`{ type, createdAt, data }\`; never a code, a hash or a key.`,
      request: {
        headers: SIGNED,
        body: {
          content: {
            'application/json': {
              schema: z.object({ type: z.literal(type), createdAt: z.string(), data }),
            },
          },
        },
      },
      responses: {
        200: { description: 'Any 2xx acknowledges the delivery; anything else, or no answer in 10 s, is retried' },
      },
    });
  }
}
