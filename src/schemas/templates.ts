import { z } from '@hono/zod-openapi';
import {
  bodyText,
  envelope,
  label,
  NEXT_CURSOR,
  oneNotEmpty,
  priority,
  recipients,
  resourceId,
  subjectText,
  templateVars,
} from './common';
import {
  MAX_RECIPIENTS,
  ONE_SENDER,
  ONE_SENDER_DOC,
  recipientCount,
  senderFields,
  sendingFields,
  TOO_MANY_RECIPIENTS,
} from './sending';

/** POST /api/v1/templates */
export const createTemplateBody = z
  .strictObject({ name: label, subject: subjectText, htmlBody: bodyText.optional(), textBody: bodyText.optional() })
  .refine((body) => body.htmlBody || body.textBody, { message: 'htmlBody or textBody is required', path: ['htmlBody'] })
  .openapi({ ...oneNotEmpty(['htmlBody', 'textBody']), description: 'htmlBody or textBody is required and not empty' });

/** PUT /api/v1/templates/{templateId} */
export const updateTemplateBody = z
  .strictObject({
    name: label.optional(),
    subject: subjectText.optional(),
    htmlBody: bodyText.optional(),
    textBody: bodyText.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'expected at least one field to change', path: ['name'] })
  .openapi({
    minProperties: 1,
    description:
      'The fields to change (at least one). The template must keep a non-empty htmlBody or textBody: emptying the only one is 400',
  });

/** POST /api/v1/templates/send */
export const templateSendBody = z
  .strictObject({
    to: recipients,
    ...sendingFields,
    templateId: resourceId,
    vars: templateVars.optional(),
    subject: subjectText.optional(),
    html: bodyText.optional(),
    text: bodyText.optional(),
    priority: priority.optional(),
    ...senderFields,
  })
  .refine(...ONE_SENDER)
  .refine((body) => recipientCount(body) <= MAX_RECIPIENTS, { message: TOO_MANY_RECIPIENTS, path: ['to'] })
  .openapi({
    ...ONE_SENDER_DOC,
    description: `subject, html and text override the template's. The mail needs content: 400 when it would have none. ${TOO_MANY_RECIPIENTS} (duplicates count once).`,
  });

/** POST /api/v1/templates/send-test */
export const sendTestBody = z
  .strictObject({ to: recipients, priority: priority.optional(), ...senderFields })
  .refine(...ONE_SENDER)
  .openapi(ONE_SENDER_DOC);

export const templateIdParam = z.object({ templateId: resourceId });

export const templateSummary = z.object({
  id: z.string(),
  name: z.string(),
  subject: z.string(),
  updatedAt: z.string(),
});

export const templateDetail = z.object({
  id: z.string(),
  name: z.string(),
  subject: z.string(),
  htmlBody: z.string(),
  textBody: z.string(),
});

export const templateListResponse = envelope(
  z.object({
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
    items: z.array(templateSummary),
    nextCursor: NEXT_CURSOR,
  }),
);
export const templateResponse = envelope(templateDetail);
export const templateCreatedResponse = envelope(templateDetail.extend({ updatedAt: z.string() }));
export const templateQueuedResponse = envelope(
  z.object({ id: z.string(), status: z.enum(['QUEUED', 'SCHEDULED']), templateId: z.string() }),
);
export const templateDeletedResponse = envelope(z.object({ id: z.string(), deleted: z.literal(true) }));
