// Webhook endpoints of an account (any API key; a key subscribes only to events of its scopes), their
// delivery log, a test event and manual retries.

import { anyApiKey } from '../auth/guards';
import { linksFilling, linkTo } from '../openapi/document';
import { RETENTION_NOTE } from '../retention';
import { pageData, pageQuery, pageRequest } from '../schemas/common';
import * as schema from '../schemas/webhooks';
import { accountStore } from '../store/account/client';
import type { WebhookDelivery } from '../store/account/webhook-deliveries';
import type { WebhookEndpoint } from '../store/account/webhooks';
import {
  addEndpoint,
  changeEndpoint,
  checkEventScopes,
  ownEndpoint,
  removeEndpoint,
  retryDelivery,
  sendTestEvent,
} from '../webhooks/endpoints';
import { json, ok, route, router } from './route';

const view = (w: WebhookEndpoint) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  ...(w.description ? { description: w.description } : {}),
  enabled: w.enabled,
  ...(w.disabledReason ? { disabledReason: w.disabledReason } : {}),
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});

const deliveryView = (d: WebhookDelivery) => ({
  id: d.id,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attempts,
  ...(d.lastStatus === null ? {} : { lastStatus: d.lastStatus }),
  ...(d.lastError === null ? {} : { lastError: d.lastError }),
  ...(d.lastResponse === null ? {} : { lastResponse: d.lastResponse }),
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

const EXAMPLE = {
  id: 'whk_3x7kq2mzd5ncw4ty8hbe5vr2a',
  url: 'https://api.example.com/postcode-events',
  events: ['email.sent' as const, 'email.failed' as const],
  description: 'Delivery outcomes',
  enabled: true,
  createdAt: '2026-11-21T22:45:00.000Z',
  updatedAt: '2026-11-21T22:45:00.000Z',
};
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const DELIVERY = {
  id: 'msg_9f3c2a1b7d6e5f4a3b2c1d0e9f',
  eventType: 'email.sent',
  status: 'delivered' as const,
  attempts: 1,
  lastStatus: 204,
  lastResponse: '',
  createdAt: '2026-11-21T22:45:01.000Z',
  updatedAt: '2026-11-21T22:45:01.000Z',
};
const common = { tag: 'Webhooks' as const, guard: anyApiKey, limit: { bucket: 'read' as const } };

/** From a created endpoint to the routes that take its id. */
const ENDPOINT_LINKS = linksFilling('webhookId', '$response.body#/data/id', {
  getWebhook: ['get', '/api/v1/webhooks/{webhookId}'],
  updateWebhook: ['patch', '/api/v1/webhooks/{webhookId}'],
  deleteWebhook: ['delete', '/api/v1/webhooks/{webhookId}'],
  sendTestEvent: ['post', '/api/v1/webhooks/{webhookId}/test'],
  listDeliveries: ['get', '/api/v1/webhooks/{webhookId}/deliveries'],
});
/** From a delivery (of the endpoint in the request's path) to its retry. */
const retryLink = (deliveryIdAt: string) => ({
  retryDelivery: linkTo('post', '/api/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry', {
    parameters: { webhookId: '$request.path.webhookId', deliveryId: deliveryIdAt },
  }),
});

const create = route({
  ...common,
  method: 'post',
  path: '/api/v1/webhooks',
  summary: 'Add a webhook endpoint',
  description: 'At most 20 per account. The answer shows the signing secret once.',
  body: schema.createWebhookBody,
  bodyExample: { url: EXAMPLE.url, events: EXAMPLE.events, description: EXAMPLE.description },
  success: {
    status: 201,
    content: json(schema.webhookWithSecretResponse, { success: true, data: { ...EXAMPLE, secret: SECRET } }),
    links: ENDPOINT_LINKS,
  },
  errors: ['WEBHOOK_LIMIT_REACHED'],
});

const list = route({
  ...common,
  method: 'get',
  path: '/api/v1/webhooks',
  summary: 'List webhook endpoints',
  success: { status: 200, content: json(schema.webhookListResponse, { success: true, data: { webhooks: [EXAMPLE] } }) },
});

const get = route({
  ...common,
  method: 'get',
  path: '/api/v1/webhooks/{webhookId}',
  summary: 'Get a webhook endpoint',
  params: schema.webhookIdParam,
  success: { status: 200, content: json(schema.webhookResponse, { success: true, data: EXAMPLE }) },
  errors: ['WEBHOOK_NOT_FOUND'],
});

const update = route({
  ...common,
  method: 'patch',
  path: '/api/v1/webhooks/{webhookId}',
  summary: 'Change, enable, disable a webhook endpoint, or rotate its secret',
  params: schema.webhookIdParam,
  body: schema.updateWebhookBody,
  bodyExample: { enabled: true, rotateSecret: true },
  success: {
    status: 200,
    description: '`secret` is present only when it was rotated',
    content: json(schema.webhookUpdatedResponse, { success: true, data: { ...EXAMPLE, secret: SECRET } }),
  },
  errors: ['WEBHOOK_NOT_FOUND'],
});

const remove = route({
  ...common,
  method: 'delete',
  path: '/api/v1/webhooks/{webhookId}',
  summary: 'Delete a webhook endpoint and its delivery log',
  params: schema.webhookIdParam,
  success: {
    status: 200,
    content: json(schema.webhookDeletedResponse, { success: true, data: { id: EXAMPLE.id, deleted: true } }),
  },
  errors: ['WEBHOOK_NOT_FOUND'],
});

const test = route({
  ...common,
  method: 'post',
  path: '/api/v1/webhooks/{webhookId}/test',
  summary: 'Send a webhook.test event',
  params: schema.webhookIdParam,
  success: {
    status: 200,
    content: json(schema.deliveryResponse, {
      success: true,
      data: { ...DELIVERY, eventType: 'webhook.test', status: 'pending', attempts: 0 },
    }),
    links: retryLink('$response.body#/data/id'),
  },
  errors: ['WEBHOOK_NOT_FOUND'],
});

const deliveries = route({
  ...common,
  method: 'get',
  path: '/api/v1/webhooks/{webhookId}/deliveries',
  summary: 'The delivery log of an endpoint',
  description: RETENTION_NOTE.deliveries,
  params: schema.webhookIdParam,
  query: pageQuery,
  success: {
    status: 200,
    content: json(schema.deliveryListResponse, {
      success: true,
      data: { deliveries: [DELIVERY], total: 1, page: 1, totalPages: 1, nextCursor: null },
    }),
    links: retryLink('$response.body#/data/deliveries/0/id'),
  },
  errors: ['WEBHOOK_NOT_FOUND'],
});

const retry = route({
  ...common,
  method: 'post',
  path: '/api/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry',
  summary: 'Deliver again now',
  params: schema.deliveryParams,
  success: {
    status: 200,
    content: json(schema.deliveryResponse, { success: true, data: { ...DELIVERY, status: 'pending' } }),
  },
  errors: ['WEBHOOK_NOT_FOUND', 'DELIVERY_NOT_FOUND'],
});

export const webhookRoutes = router()
  .openapi(create, async (c) => {
    const body = c.req.valid('json');
    checkEventScopes(c.var.credential.scopes, body.events);
    const endpoint = await addEndpoint(c.env, c.var.credential.accountId, body);
    return ok(c, { ...view(endpoint), secret: endpoint.secret }, 201);
  })
  .openapi(list, async (c) => {
    const endpoints = await accountStore(c.env, c.var.credential.accountId).listEndpoints(c.var.credential.accountId);
    return ok(c, { webhooks: endpoints.map(view) });
  })
  .openapi(get, async (c) => {
    const endpoint = await ownEndpoint(c.env, c.var.credential.accountId, c.req.valid('param').webhookId);
    return ok(c, view(endpoint));
  })
  .openapi(update, async (c) => {
    const body = c.req.valid('json');
    if (body.events) checkEventScopes(c.var.credential.scopes, body.events);
    const { webhookId } = c.req.valid('param');
    const { endpoint, secret } = await changeEndpoint(c.env, c.var.credential.accountId, webhookId, body);
    return ok(c, { ...view(endpoint), ...(secret ? { secret } : {}) });
  })
  .openapi(remove, async (c) => {
    const { webhookId } = c.req.valid('param');
    await removeEndpoint(c.env, c.var.credential.accountId, webhookId);
    return ok(c, { id: webhookId, deleted: true as const });
  })
  .openapi(test, async (c) => {
    const id = await sendTestEvent(c.env, c.var.credential.accountId, c.req.valid('param').webhookId);
    const now = new Date().toISOString();
    return ok(c, {
      id,
      eventType: 'webhook.test',
      status: 'pending' as const,
      attempts: 0,
      createdAt: now,
      updatedAt: now,
    });
  })
  .openapi(deliveries, async (c) => {
    const endpoint = await ownEndpoint(c.env, c.var.credential.accountId, c.req.valid('param').webhookId);
    const request = pageRequest(c.req.valid('query'));
    const page = await accountStore(c.env, c.var.credential.accountId).listDeliveries(endpoint.id, request);
    const data = pageData('deliveries', { ...page, items: page.items.map(deliveryView) }, request);
    return ok(c, data);
  })
  .openapi(retry, async (c) => {
    const { webhookId, deliveryId } = c.req.valid('param');
    return ok(c, deliveryView(await retryDelivery(c.env, c.var.credential.accountId, webhookId, deliveryId)));
  });
