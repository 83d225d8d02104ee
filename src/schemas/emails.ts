import { z } from '@hono/zod-openapi';
import { queryInt } from '../validation';
import {
  bodyText,
  emailAddress,
  envelope,
  pageOf,
  priority,
  recipients,
  resourceId,
  subjectText,
  templateVars,
} from './common';

const imageUrl = z
  .url({ protocol: /^https$/, error: 'expected an https URL' })
  .max(2048, 'must be at most 2048 characters')
  .openapi({ format: 'uri', pattern: '^https://' });

/** POST /api/v1/emails */
export const queueEmailBody = z
  .strictObject({
    to: recipients,
    subject: subjectText,
    html: bodyText.optional(),
    text: bodyText.optional(),
    imageUrl: imageUrl.optional(),
    templateId: resourceId.optional(),
    vars: templateVars.optional(),
    priority: priority.optional(),
    senderEmailId: resourceId.optional(),
  })
  .refine((body) => body.html || body.text || body.imageUrl || body.templateId, {
    message: 'one of html, text, imageUrl or templateId is required',
    path: ['html'],
  })
  .openapi({
    anyOf: ['html', 'text', 'imageUrl', 'templateId'].map((field) => ({ required: [field] })),
    description: 'One of html, text, imageUrl or templateId is required (and not empty)',
  });

/** GET /api/v1/emails and GET /api/v1/templates */
export const pageQuery = z.object({ page: queryInt(1, 1_000_000, 1), limit: queryInt(1, 100, 20) });

export const queuedResponse = envelope(z.object({ id: z.string(), status: z.literal('QUEUED') }));

/** QUEUED while a recipient waits; SENT when at least one recipient got it; SUPPRESSED when all were skipped. */
export const emailStatus = z.enum(['QUEUED', 'SENT', 'FAILED', 'SUPPRESSED']).openapi({
  description:
    'QUEUED while a recipient waits; then SENT when the server accepted it for at least one recipient, SUPPRESSED when every recipient was on the suppression list, else FAILED',
});

/** GET /api/v1/emails: the page, and optional filters. */
export const sendLogQuery = pageQuery.extend({
  status: emailStatus.optional(),
  to: emailAddress.optional().openapi({ description: 'Only emails with this recipient (any spelling of it)' }),
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
  status: z.enum(['QUEUED', 'SENT', 'FAILED', 'SUPPRESSED']),
  reply: z.string().optional().openapi({ description: "The server's reply to this recipient, when it refused" }),
});

const emailEvent = z.object({
  type: z.enum(['queued', 'held', 'released', 'deferred', 'sent', 'failed', 'suppressed', 'recovered']),
  at: z.string(),
  detail: z.string().optional(),
});

export const emailDetailResponse = envelope(
  z.object({
    id: z.string(),
    status: emailStatus,
    from: z.string(),
    to: z.array(z.string()),
    subject: z.string(),
    messageId: z.string(),
    createdAt: z.string(),
    sentAt: z.string().optional(),
    attempts: z.number().int(),
    lastReply: z.string().optional(),
    recipients: z.array(recipientOutcome),
    events: z.array(emailEvent),
  }),
);

export const emailListResponse = pageOf('emails', emailLogEntry);
