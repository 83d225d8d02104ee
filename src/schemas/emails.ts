import { z } from '@hono/zod-openapi';
import { queryInt } from '../validation';
import { bodyText, envelope, priority, recipients, resourceId, subjectText, templateVars } from './common';

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

export const emailLogEntry = z.object({
  id: z.string(),
  subject: z.string(),
  toAddresses: z.array(z.string()),
  status: z.enum(['QUEUED', 'SENT', 'FAILED']),
  createdAt: z.string(),
});

export const emailListResponse = envelope(
  z.object({
    emails: z.array(emailLogEntry),
    total: z.number().int(),
    page: z.number().int(),
    totalPages: z.number().int(),
  }),
);
