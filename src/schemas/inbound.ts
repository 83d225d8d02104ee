import { z } from '@hono/zod-openapi';
import { PATTERN_SYNTAX } from '../inbound/patterns';
import { envelope, resourceId } from './common';

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
        kind: z
          .enum(['subdomain'])
          .openapi({ description: "`subdomain`: the account's own under the service's INBOUND_DOMAIN" }),
      }),
    ),
  }),
);
