import { z } from '@hono/zod-openapi';
import { PATTERN_SYNTAX } from '../inbound/patterns';
import { emailAddress, envelope, pageOf, pageQuery, resourceId } from './common';
import { INSTANT_PATTERN, instant } from './metrics';

const action = z.enum(['webhook', 'store', 'reject']).openapi({
  description:
    '`webhook`: stored and sent as `email.received` to the endpoints subscribed to it; `store`: stored only; `reject`: refused at SMTP with `rejectReason`',
});

/** Printable ASCII: it becomes the text of an SMTP reply. */
const rejectReason = z
  .string()
  .min(1, 'must be 1-200 characters')
  .max(200, 'must be 1-200 characters')
  .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII (it is sent as an SMTP reply)')
  .openapi({ description: 'With `reject`: what the sending server is told', pattern: '^[\\x20-\\x7e]+$' });

const pattern = z
  .string()
  .min(3, 'must be 3-320 characters')
  .max(320, 'must be 3-320 characters')
  .regex(
    new RegExp(PATTERN_SYNTAX),
    'expected name@domain, name+*@domain or *@domain (a name of at most 64 characters)',
  )
  .openapi({
    pattern: PATTERN_SYNTAX,
    description:
      "`support@…` (exactly that address), `support+*@…` (its sub-addresses, not support itself) or `*@…` (any), on one of the account's receiving domains; case does not matter",
    example: 'support@acme.inbound.postcode.example',
  });

/** POST /api/v1/inbound/routes: a reason goes with `reject` only. */
export const createRouteBody = z.discriminatedUnion('action', [
  z.strictObject({ pattern, action: z.literal('reject'), rejectReason: rejectReason.optional() }),
  z.strictObject({ pattern, action: z.enum(['webhook', 'store']) }),
]);

/** PATCH /api/v1/inbound/routes/{routeId} */
export const updateRouteBody = z
  .strictObject({ action: action.optional(), rejectReason: rejectReason.optional() })
  .refine((body) => Object.keys(body).length > 0, 'expected at least one field')
  .openapi({ minProperties: 1 });

export const routeIdParam = z.object({ routeId: resourceId });

const route = z.object({
  id: z.string(),
  pattern: z.string(),
  action: z.enum(['webhook', 'store', 'reject']),
  rejectReason: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const routeResponse = envelope(route);
export const routeListResponse = envelope(z.object({ routes: z.array(route) }));
export const routeDeletedResponse = envelope(z.object({ id: z.string(), deleted: z.literal(true) }));
export const addressesResponse = envelope(
  z.object({
    domains: z.array(
      z.object({
        domain: z
          .string()
          .openapi({ description: 'Mail to any address here reaches the account (routes decide what happens)' }),
        kind: z.enum(['subdomain', 'domain']).openapi({
          description:
            "`subdomain`: the account's own under the service's INBOUND_DOMAIN; `domain`: one of its sending domains (or a subdomain of it) that receives (POST /api/v1/domains/{domainId}/inbound)",
        }),
        domainId: z.string().nullable().openapi({ description: 'The sending domain it belongs to (kind `domain`)' }),
      }),
    ),
  }),
);

/** GET /api/v1/inbound */
export const inboundListQuery = pageQuery.extend({
  to: emailAddress.optional().openapi({ description: 'Only mail that arrived at this address' }),
  from: emailAddress.optional().openapi({ description: 'Only mail from this address (its From header)' }),
  since: instant
    .optional()
    .openapi({ type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, description: 'Received at or after' }),
  until: instant
    .optional()
    .openapi({ type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, description: 'Received before' }),
});

export const inboundIdParam = z.object({ inboundId: resourceId });
export const attachmentParams = z.object({
  inboundId: resourceId,
  index: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,2})$/, 'expected a whole number from 0 to 999')
    .transform(Number)
    .openapi({ pattern: '^(0|[1-9][0-9]{0,2})$', description: "The attachment's index in `attachments`" }),
});

export const mailbox = z.object({ address: z.string(), name: z.string() });
const verdict = z.enum(['pass', 'fail', 'none', 'unknown']);

const inboundSummary = z.object({
  id: z.string(),
  to: z.string().openapi({ description: 'The address it arrived at' }),
  from: mailbox.nullable(),
  subject: z.string().nullable(),
  emailId: z.string().nullable().openapi({ description: "The account's sent email it replies to" }),
  action: z.enum(['webhook', 'store']).openapi({ description: 'What its route said when it arrived' }),
  autoReply: z.boolean().openapi({ description: 'Sent by a machine in answer (Auto-Submitted): never an event' }),
  deliveryReport: z.boolean().openapi({ description: 'A delivery status notification: never an event' }),
  spoofed: z.boolean().openapi({ description: "It claims one of the account's own domains and fails DMARC" }),
  attachmentCount: z.number().int(),
  size: z.number().int().openapi({ description: 'Bytes as received' }),
  receivedAt: z.string(),
});

const inboundDetail = inboundSummary.extend({
  envelopeFrom: z.string(),
  toList: z.array(mailbox),
  cc: z.array(mailbox),
  replyTo: z.array(mailbox),
  date: z.string().nullable(),
  messageId: z.string().nullable(),
  inReplyTo: z.string().nullable(),
  references: z.array(z.string()),
  text: z.string().nullable(),
  html: z.string().nullable(),
  headers: z.array(z.object({ key: z.string(), value: z.string() })),
  authentication: z.object({ spf: verdict, dkim: verdict, dmarc: verdict }),
  attachments: z.array(
    z.object({
      index: z.number().int(),
      filename: z.string().nullable(),
      contentType: z.string(),
      size: z.number().int(),
      contentId: z.string().nullable(),
      disposition: z.enum(['attachment', 'inline']).nullable(),
      url: z.string(),
    }),
  ),
  rawUrl: z.string(),
});

export const inboundListResponse = pageOf('messages', inboundSummary);
export const inboundResponse = envelope(inboundDetail);
