import { z } from '@hono/zod-openapi';
import { emailAddress, envelope, label, pageOf } from './common';
import { futureTime, futureTimeDoc } from './sending';

export const suppressionReason = z.enum(['hard_bounce', 'complaint', 'rcpt_rejected', 'manual']).openapi({
  description:
    'hard_bounce: a permanent bounce after the relay; complaint: marked as spam; rcpt_rejected: refused for good (5xx) at RCPT TO; manual: added here',
});

export const suppression = z.object({
  email: z.string().openapi({ description: 'The mailbox in its canonical form (lower case, unquoted, punycode)' }),
  reason: suppressionReason,
  note: z
    .string()
    .nullable()
    .openapi({ description: "The server's words (a refusal, a bounce's diagnostic), or the note it was added with" }),
  emailId: z.string().nullable().openapi({ description: 'The email that caused it; null when added by hand' }),
  expiresAt: z.string().nullable().openapi({
    description:
      'When it stops blocking (hard bounces after SUPPRESS_HARD_BOUNCE_DAYS; null: never). An expired entry blocks nothing and is listed until removed or replaced',
  }),
  createdAt: z.string(),
});

export const suppressionListResponse = pageOf('suppressions', suppression);

/** POST /api/v1/suppressions */
export const addSuppressionBody = z.strictObject({
  email: emailAddress,
  reason: z.literal('manual').optional().openapi({ description: 'Entries added here are manual' }),
  note: label.optional().openapi({ description: 'Why (kept with the entry)' }),
  expiresAt: futureTime
    .optional()
    .openapi({ ...futureTimeDoc, description: 'When it stops blocking (absent: never); in the future' }),
});

export const suppressionResponse = envelope(suppression);

export const suppressionParam = z.object({ email: emailAddress });

export const suppressionDeletedResponse = envelope(z.object({ email: z.string(), deleted: z.literal(true) }));
