import { z } from '@hono/zod-openapi';
import { SENDER_PROBLEM_REASONS } from '../mail/bounce-reasons';
import { envelope } from './common';

/** A date and time with its offset, as the document states it. */
export const INSTANT_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$';
export const instant = z
  .string()
  .refine((text) => new RegExp(INSTANT_PATTERN).test(text) && !Number.isNaN(Date.parse(text)), {
    message: 'expected an ISO 8601 date and time, e.g. 2026-11-20T00:00:00Z',
  })
  .transform((text) => new Date(text));

export const metricsQuery = z.object({
  from: instant.optional().openapi({
    type: 'string',
    format: 'date-time',
    pattern: INSTANT_PATTERN,
    description:
      'Start (ISO 8601), before `to` and at most 92 days before it (14 days by the hour); default: 7 days before `to` (24 hours by the hour)',
  }),
  to: instant.optional().openapi({
    type: 'string',
    format: 'date-time',
    pattern: INSTANT_PATTERN,
    description: 'End, exclusive (ISO 8601); default: now',
  }),
  granularity: z
    .enum(['day', 'hour'], { error: 'expected day or hour' })
    .default('day')
    .openapi({ description: 'Buckets of UTC days or hours' }),
});

const counts = {
  queued: z.number().int().openapi({ description: 'Recipients accepted (in the hour their email was accepted)' }),
  sent: z.number().int().openapi({ description: 'Recipients a route accepted' }),
  delivered: z.number().int().openapi({ description: 'Recipients the provider reported delivered' }),
  bounced: z.number().int().openapi({ description: 'Recipients that bounced after the relay, for any reason' }),
  bouncedSenderProblem: z
    .number()
    .int()
    .openapi({
      description: `Of bounced, those whose reason is the sender's problem (${SENDER_PROBLEM_REASONS.join(', ')}): its reputation, authentication or content, not the address`,
    }),
  complained: z.number().int(),
  failed: z.number().int(),
  suppressed: z.number().int(),
};
const rate = z.number().nullable();
const funnel = z.object({
  sent: z.number().int().openapi({ description: 'Sessions sent in the period that have ended' }),
  verified: z.number().int(),
  locked: z.number().int(),
  expired: z.number().int(),
  conversionRate: rate.openapi({ description: 'verified / sent; null when none' }),
  medianSecondsToVerify: z.number().int().nullable().openapi({
    description:
      'Within how many seconds half the verified sessions were verified (one of 10, 30, 60, 120, 300, 600, 1800, 3600); null when none, or beyond an hour',
  }),
  refused: z
    .object({
      challenge_failed: z.number().int().openapi({ description: 'The bot check (Turnstile) failed' }),
      recipient_capped: z.number().int().openapi({ description: "The recipient's limits: 10 minutes, day, wait" }),
      domain_capped: z.number().int().openapi({ description: "The token's cap per recipient domain" }),
      address_not_allowed: z.number().int().openapi({ description: "The token's policy refused the address" }),
    })
    .openapi({ description: 'Sends and resends refused in the period, by reason; nothing was mailed for them' }),
});

export const metricsResponse = envelope(
  z.object({
    from: z.string(),
    to: z.string(),
    granularity: z.enum(['day', 'hour']),
    emails: z.object({
      totals: z.object(counts),
      rates: z.object({ delivered: rate, bounced: rate, complained: rate }).openapi({
        description: 'Shares of sent (0-1, four decimals); null when none was sent',
      }),
      series: z.array(z.object({ start: z.string(), ...counts })),
    }),
    otp: z.object({ instant: funnel, backend: funnel, email_verification: funnel }),
  }),
);
