import { z } from '@hono/zod-openapi';
import { EVENT_TYPES } from '../webhooks/events';
import { envelope, label, pageOf, resourceId } from './common';

const eventList = z
  .array(z.enum(EVENT_TYPES))
  .min(1, 'must name at least one event')
  .max(EVENT_TYPES.length)
  .refine((events) => new Set(events).size === events.length, 'must not repeat an event')
  .openapi({
    uniqueItems: true,
    description: '`email.*` events need a key with mail_api; `otp.*` and `email_verification.*` need server_otp',
  });

const webhookUrl = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine((url) => !/[\x00-\x20\x7f]/.test(url), 'must not contain spaces or control characters')
  .openapi({
    format: 'uri',
    pattern: '^[^\\x00-\\x20\\x7f]+$',
    description: 'https only; no credentials; not a private, loopback or link-local IP address',
  });

/** POST /api/v1/webhooks */
export const createWebhookBody = z.strictObject({
  url: webhookUrl,
  events: eventList,
  description: label.optional(),
});

/** PATCH /api/v1/webhooks/{webhookId} */
export const updateWebhookBody = z
  .strictObject({
    url: webhookUrl.optional(),
    events: eventList.optional(),
    description: label.nullable().optional(),
    enabled: z.boolean().optional(),
    rotateSecret: z.literal(true).optional().openapi({ description: 'Issue a new secret (shown in the answer once)' }),
  })
  .refine((body) => Object.keys(body).length > 0, 'expected at least one field')
  .openapi({ minProperties: 1 });

export const webhookIdParam = z.object({ webhookId: resourceId });
export const deliveryParams = z.object({ webhookId: resourceId, deliveryId: resourceId });

const webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  description: z.string().optional(),
  enabled: z.boolean(),
  disabledReason: z.string().optional().openapi({ description: 'Why postcode disabled it' }),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** Create and secret rotation show the secret (whsec_…) once. */
export const webhookWithSecretResponse = envelope(
  webhook.extend({ secret: z.string().openapi({ description: 'whsec_…: verify signatures with it; shown once' }) }),
);
export const webhookResponse = envelope(webhook);
/** PATCH: `secret` only when it was rotated. */
export const webhookUpdatedResponse = envelope(
  webhook.extend({ secret: z.string().optional().openapi({ description: 'The new secret, when rotated' }) }),
);
export const webhookListResponse = envelope(z.object({ webhooks: z.array(webhook) }));
export const webhookDeletedResponse = envelope(z.object({ id: z.string(), deleted: z.literal(true) }));

export const delivery = z.object({
  id: z.string().openapi({ description: 'The webhook-id header: the same on every attempt' }),
  eventType: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  lastStatus: z.number().int().optional().openapi({ description: 'HTTP status of the last answer' }),
  lastError: z.string().optional(),
  lastResponse: z
    .string()
    .optional()
    .openapi({ description: "The first 2,048 bytes of the last answer's body, as text; absent when none came" }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const deliveryResponse = envelope(delivery);
export const deliveryListResponse = pageOf('deliveries', delivery);

/** POST /api/v1/webhook-listeners */
export const createListenerBody = z.strictObject({
  events: eventList
    .optional()
    .openapi({ description: "The events to receive; every event the key's scopes allow when absent" }),
});
export const listenerIdParam = z.object({ listenerId: resourceId });

export const listenerCreatedResponse = envelope(
  z.object({
    listenerId: z.string(),
    secret: z.string().openapi({ description: 'whsec_…: the signing secret of this session only; shown once' }),
    events: z.array(z.enum(EVENT_TYPES)),
    connectUrl: z.string().openapi({ description: 'Open a WebSocket here (with the same key) before connectBy' }),
    connectBy: z.string(),
  }),
);
export const listenerListResponse = envelope(
  z.object({
    listeners: z.array(
      z.object({ listenerId: z.string(), events: z.array(z.enum(EVENT_TYPES)), connectedAt: z.string() }),
    ),
  }),
);
