import { z } from '@hono/zod-openapi';
import { emailAddress, envelope, label, pageOf } from './common';

export const suppression = z.object({
  email: z.string().openapi({ description: 'The mailbox in its canonical form (lower case, unquoted, punycode)' }),
  reason: z.string().nullable(),
  source: z
    .enum(['bounce', 'manual'])
    .openapi({ description: 'bounce: a permanent (5xx) refusal; manual: added here' }),
  createdAt: z.string(),
});

export const suppressionListResponse = pageOf('suppressions', suppression);

/** POST /api/v1/suppressions */
export const addSuppressionBody = z.strictObject({ email: emailAddress, reason: label.optional() });

export const suppressionResponse = envelope(suppression);

export const suppressionParam = z.object({ email: emailAddress });

export const suppressionDeletedResponse = envelope(z.object({ email: z.string(), deleted: z.literal(true) }));
