// Listening sessions (`postcode webhooks listen`): the account's events delivered into a WebSocket the caller
// holds, signed with the session's own secret, so a local server receives them without a public URL.
import { anyApiKey } from '../auth/guards';
import { ApiError } from '../errors';
import { linkTo } from '../openapi/document';
import * as schema from '../schemas/webhooks';
import { accountStore } from '../store/account/client';
import { checkEventScopes } from '../webhooks/endpoints';
import { EVENT_TYPES, scopeOfEvent } from '../webhooks/events';
import { CONNECT_WITHIN_SECONDS, connectListener, openListener } from '../webhooks/listen';
import { json, ok, route, router } from './route';

const common = { tag: 'Webhooks' as const, guard: anyApiKey, limit: { bucket: 'read' as const } };
const LISTENER_ID = 'lsn_3x7kq2mzd5ncw4ty8hbe5vr2a';
const EXAMPLE = {
  listenerId: LISTENER_ID,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  events: ['email.sent' as const, 'email.bounced' as const],
  connectUrl: `wss://postcode.example.com/api/v1/webhook-listeners/${LISTENER_ID}`,
  connectBy: '2026-11-21T22:46:00.000Z',
};

const create = route({
  ...common,
  method: 'post',
  path: '/api/v1/webhook-listeners',
  summary: 'Start a listening session (what `postcode webhooks listen` does)',
  description: `The account's events, signed with the session's secret as for an endpoint, are sent into a WebSocket the caller opens at \`connectUrl\` within ${CONNECT_WITHIN_SECONDS} s; the caller answers each with the status its own receiver gave, which counts as the endpoint's answer. The session ends when the connection closes, and nothing stays registered. At most 5 connected at once.`,
  body: schema.createListenerBody,
  bodyExample: { events: EXAMPLE.events },
  success: {
    status: 201,
    content: json(schema.listenerCreatedResponse, { success: true, data: EXAMPLE }),
    links: {
      connectListener: linkTo('get', '/api/v1/webhook-listeners/{listenerId}', {
        parameters: { listenerId: '$response.body#/data/listenerId' },
      }),
    },
  },
  errors: ['SCOPE_REQUIRED'],
});

const list = route({
  ...common,
  method: 'get',
  path: '/api/v1/webhook-listeners',
  summary: 'The connected listening sessions',
  success: {
    status: 200,
    content: json(schema.listenerListResponse, {
      success: true,
      data: { listeners: [{ listenerId: LISTENER_ID, events: EXAMPLE.events, connectedAt: EXAMPLE.connectBy }] },
    }),
  },
});

const connect = route({
  ...common,
  method: 'get',
  path: '/api/v1/webhook-listeners/{listenerId}',
  summary: 'Connect a listening session (a WebSocket)',
  description:
    'With `Upgrade: websocket`. Messages down: `{"type":"ready"}`, then `{"type":"event","id","headers","body"}` per delivery (headers and body exactly as an endpoint gets them). Messages up: `{"type":"forwarded","id","status","error"?,"response"?}` within 10 s, and `{"type":"ping"}` (answered `{"type":"pong"}`).',
  params: schema.listenerIdParam,
  success: { status: 101, description: 'Switching Protocols: the WebSocket of the session', content: {} },
  errors: ['UPGRADE_REQUIRED', 'LISTENER_NOT_FOUND', 'WEBHOOK_LIMIT_REACHED'],
});

export const webhookListenerRoutes = router()
  .openapi(create, async (c) => {
    const { credential } = c.var;
    const body = c.req.valid('json');
    const events = body.events ?? EVENT_TYPES.filter((event) => credential.scopes.includes(scopeOfEvent(event)));
    checkEventScopes(credential.scopes, events);
    return ok(c, await openListener(c.env, credential.accountId, events, new URL(c.req.url)), 201);
  })
  .openapi(list, async (c) => {
    const { accountId } = c.var.credential;
    const listeners = await accountStore(c.env, accountId).listListeners(accountId);
    return ok(c, {
      listeners: listeners.map((l) => ({ listenerId: l.id, events: l.events, connectedAt: l.createdAt })),
    });
  })
  .openapi(connect, async (c) => {
    if (c.req.header('Upgrade')?.toLowerCase() !== 'websocket') {
      throw new ApiError('UPGRADE_REQUIRED', 'Upgrade: this route takes a WebSocket connection (Upgrade: websocket)');
    }
    const { listenerId } = c.req.valid('param');
    return connectListener(c.env, c.var.credential.accountId, listenerId, c.req.raw) as never;
  });
