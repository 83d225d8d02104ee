import { z } from '@hono/zod-openapi';
import { BOUNCE_REASONS, HARD_BOUNCE_REASONS, SENDER_PROBLEM_REASONS } from '../mail/bounce-reasons';
import {
  bodyText,
  emailAddress,
  envelope,
  oneNotEmpty,
  pageOf,
  pageQuery,
  priority,
  recipients,
  resourceId,
  subjectText,
  templateVars,
} from './common';
import { mailbox } from './inbound';
import {
  MAX_RECIPIENTS,
  ONE_SENDER,
  ONE_SENDER_DOC,
  recipientCount,
  scheduledAt,
  senderFields,
  sendingFields,
  TOO_MANY_RECIPIENTS,
} from './sending';

const imageUrl = z
  .url({ protocol: /^https$/, error: 'expected an https URL' })
  .max(2048, 'must be at most 2048 characters')
  .openapi({ format: 'uri', pattern: '^https://' });

/** POST /api/v1/emails (and each email of the batch) */
export const queueEmailBody = z
  .strictObject({
    to: recipients,
    ...sendingFields,
    subject: subjectText,
    html: bodyText.optional(),
    text: bodyText.optional(),
    imageUrl: imageUrl.optional(),
    templateId: resourceId.optional(),
    vars: templateVars.optional(),
    priority: priority.optional(),
    ...senderFields,
  })
  .refine(...ONE_SENDER)
  .refine((body) => body.html || body.text || body.imageUrl || body.templateId, {
    message: 'one of html, text, imageUrl or templateId is required',
    path: ['html'],
  })
  .refine((body) => recipientCount(body) <= MAX_RECIPIENTS, { message: TOO_MANY_RECIPIENTS, path: ['to'] })
  .openapi({
    ...oneNotEmpty(['html', 'text', 'imageUrl', 'templateId']),
    ...ONE_SENDER_DOC,
    description: `One of html, text, imageUrl or templateId is required and not empty. ${TOO_MANY_RECIPIENTS} (duplicates count once).`,
  });

/** QUEUED, or SCHEDULED when the request named `scheduledAt`. */
export const queuedStatus = z.enum(['QUEUED', 'SCHEDULED']);
export const queuedResponse = envelope(z.object({ id: z.string(), status: queuedStatus }));

/** POST /api/v1/emails/batch */
export const batchBody = z.strictObject({
  emails: z
    .array(queueEmailBody)
    .min(1, 'expected 1-100 emails')
    .max(100, 'expected 1-100 emails')
    .openapi({ description: 'Each as the body of POST /api/v1/emails; all are accepted or none' }),
});
export const batchResponse = envelope(z.array(z.object({ id: z.string(), status: queuedStatus })));

/** PATCH /api/v1/emails/{emailId} */
export const rescheduleBody = z.strictObject({ scheduledAt });
export const rescheduledResponse = envelope(
  z.object({ id: z.string(), status: z.literal('SCHEDULED'), scheduledAt: z.string() }),
);
export const canceledResponse = envelope(z.object({ id: z.string(), status: z.literal('CANCELED') }));

/** The rule is src/mail/outcome.ts's (docs/decisions.md). */
export const emailStatus = z
  .enum(['SCHEDULED', 'QUEUED', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED', 'SUPPRESSED', 'CANCELED'])
  .openapi({
    description:
      'SCHEDULED until its time (CANCELED if called off before); QUEUED while a recipient waits; then SENT when a route accepted it for at least one recipient, SUPPRESSED when every recipient was on the suppression list, else FAILED. After the relay, SENT becomes DELIVERED when every recipient was delivered, BOUNCED when every recipient bounced or failed and at least one bounced',
  });

const BOUNCE_TYPE_DOC =
  'hard: the address cannot receive, and is suppressed; soft: the mailbox, this message or its sender was refused, and the address may take the next one; undetermined: the report does not say. Only hard suppresses';
const BOUNCE_REASON_DOC = `Why it bounced. Hard, suppressed: ${HARD_BOUNCE_REASONS.join(', ')}. Soft, never suppressed: the others. undetermined: the report names none (never suppressed). ${SENDER_PROBLEM_REASONS.join(', ')} are the sender's problem (its reputation, authentication or content)`;

/** A bounce's type (src/mail/bounce-reasons.ts), as the API and the webhooks say it. */
export const bounceType = z.enum(['hard', 'soft', 'undetermined']).openapi({ description: BOUNCE_TYPE_DOC });

/** Why a recipient bounced, in one vocabulary (docs/delivery.md has its table). */
export const bounceReason = z.enum(BOUNCE_REASONS).openapi({ description: BOUNCE_REASON_DOC });

const TAG_FILTER = /^[A-Za-z0-9_-]{1,256}:[A-Za-z0-9_-]{1,256}$/;

/** GET /api/v1/emails: the page, and optional filters. */
export const sendLogQuery = pageQuery.extend({
  status: emailStatus.optional(),
  to: emailAddress.optional().openapi({ description: 'Only emails with this recipient (any spelling of it)' }),
  tag: z
    .string()
    .regex(TAG_FILTER, 'expected name:value')
    .optional()
    .openapi({ pattern: TAG_FILTER.source, description: 'Only emails with this tag, as name:value' }),
  bounceReason: bounceReason.optional().openapi({
    description: `Only emails with at least one recipient that bounced for this reason. ${BOUNCE_REASON_DOC}`,
  }),
});

export const emailLogEntry = z.object({
  id: z.string(),
  subject: z.string(),
  toAddresses: z.array(z.string()),
  status: emailStatus,
  createdAt: z.string(),
});

export const emailIdParam = z.object({ emailId: resourceId });

const recipientOutcome = z.object({
  email: z.string(),
  kind: z.enum(['to', 'cc', 'bcc']),
  status: z.enum(['QUEUED', 'SENT', 'DELIVERED', 'BOUNCED', 'COMPLAINED', 'FAILED', 'SUPPRESSED', 'CANCELED']),
  reply: z
    .string()
    .optional()
    .openapi({ description: "The server's reply when it refused this recipient, or a bounce's diagnostic" }),
  bounceType: bounceType.optional().openapi({ description: `BOUNCED: ${BOUNCE_TYPE_DOC}` }),
  bounceReason: bounceReason.optional().openapi({ description: `BOUNCED: ${BOUNCE_REASON_DOC}` }),
  route: z.string().optional().openapi({ description: 'The delivery route (MAIL_ROUTES name) that took it' }),
});

const reply = z.object({
  inboundId: z.string(),
  from: mailbox.nullable(),
  subject: z.string().nullable(),
  receivedAt: z.string(),
  autoReply: z.boolean().openapi({ description: 'An automatic answer (a vacation message, say)' }),
  deliveryReport: z.boolean().openapi({ description: 'A delivery report (multipart/report)' }),
  url: z.string(),
});

const emailEvent = z.object({
  type: z.enum([
    'queued',
    'scheduled',
    'rescheduled',
    'canceled',
    'held',
    'released',
    'deferred',
    'sent',
    'failed',
    'suppressed',
    'recovered',
    'rerouted',
    'delivered',
    'bounced',
    'complained',
  ]),
  at: z.string(),
  detail: z.string().optional(),
  route: z.string().optional().openapi({ description: 'The delivery route it happened on' }),
});

export const emailDetailResponse = envelope(
  z.object({
    id: z.string(),
    status: emailStatus,
    from: z.string(),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
    replyTo: z.array(z.string()),
    subject: z.string(),
    messageId: z.string(),
    html: z.string().optional().openapi({
      description: 'The html body as sent (a template rendered with its vars); absent when the email has none',
    }),
    text: z.string().optional().openapi({ description: 'The plain-text body as sent; absent when the email has none' }),
    tags: z.array(z.object({ name: z.string(), value: z.string() })),
    headers: z.record(z.string(), z.string()),
    attachments: z.array(
      z.object({ filename: z.string(), contentType: z.string(), contentId: z.string().optional(), size: z.number() }),
    ),
    scheduledAt: z.string().optional(),
    test: z.boolean().openapi({ description: 'Queued with a test key: never sent over SMTP' }),
    createdAt: z.string(),
    sentAt: z.string().optional(),
    attempts: z.number().int(),
    lastReply: z.string().optional(),
    recipients: z.array(recipientOutcome),
    events: z.array(emailEvent),
    replies: z.array(reply).openapi({
      description:
        'Mail received in reply (its In-Reply-To or References names this email), oldest first, at most 50; each in full at its `url` (GET /api/v1/inbound/{inboundId})',
    }),
  }),
);

export const emailListResponse = pageOf('emails', emailLogEntry);
