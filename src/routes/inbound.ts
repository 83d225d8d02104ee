// Receiving mail: the account's receiving domains and its inbound routes (live mail_api keys only, as for domains).
import { liveMailApi } from '../auth/guards';
import { addInboundRoute, changeInboundRoute, patternOf, receivingDomains, routeNotFound } from '../inbound/routes';
import { linksFilling } from '../openapi/document';
import * as schema from '../schemas/inbound';
import { accountStore } from '../store/account/client';
import type { InboundRoute } from '../store/account/inbound-routes';
import { json, ok, route, router } from './route';

const common = { tag: 'Inbound' as const, guard: liveMailApi, limit: { bucket: 'read' as const } };

const view = (r: InboundRoute) => ({
  id: r.id,
  pattern: patternOf(r),
  action: r.action,
  ...(r.rejectReason ? { rejectReason: r.rejectReason } : {}),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

const DOMAIN = 'acme.inbound.postcode.example';
const EXAMPLE = {
  id: 'inr_3x7kq2mzd5ncw4ty8hbe5vr2a',
  pattern: `support@${DOMAIN}`,
  action: 'webhook' as const,
  createdAt: '2026-11-21T22:45:00.000Z',
  updatedAt: '2026-11-21T22:45:00.000Z',
};

const ROUTE_LINKS = linksFilling('routeId', '$response.body#/data/id', {
  getInboundRoute: ['get', '/api/v1/inbound/routes/{routeId}'],
  updateInboundRoute: ['patch', '/api/v1/inbound/routes/{routeId}'],
  deleteInboundRoute: ['delete', '/api/v1/inbound/routes/{routeId}'],
});

const addresses = route({
  ...common,
  method: 'get',
  path: '/api/v1/inbound/addresses',
  summary: "The account's receiving domains",
  description:
    'Mail to any address on these domains reaches the account; its routes decide what happens, and mail no route matches is refused. Forward your own `support@` here from any mail host.',
  success: {
    status: 200,
    content: json(schema.addressesResponse, {
      success: true,
      data: { domains: [{ domain: DOMAIN, kind: 'subdomain', domainId: null }] },
    }),
  },
});

const create = route({
  ...common,
  method: 'post',
  path: '/api/v1/inbound/routes',
  summary: 'Add an inbound route',
  description:
    'The most specific pattern wins: exact, then sub-addresses, then any. A new account has no routes: mail to an address no route matches is refused. At most 100 per account.',
  body: schema.createRouteBody,
  bodyExample: { pattern: EXAMPLE.pattern, action: 'webhook' },
  success: { status: 201, content: json(schema.routeResponse, { success: true, data: EXAMPLE }), links: ROUTE_LINKS },
  errors: ['INBOUND_ROUTE_EXISTS', 'INBOUND_ROUTE_LIMIT_REACHED'],
});

const list = route({
  ...common,
  method: 'get',
  path: '/api/v1/inbound/routes',
  summary: "The account's inbound routes",
  success: { status: 200, content: json(schema.routeListResponse, { success: true, data: { routes: [EXAMPLE] } }) },
});

const get = route({
  ...common,
  method: 'get',
  path: '/api/v1/inbound/routes/{routeId}',
  summary: 'Get an inbound route',
  params: schema.routeIdParam,
  success: { status: 200, content: json(schema.routeResponse, { success: true, data: EXAMPLE }) },
  errors: ['INBOUND_ROUTE_NOT_FOUND'],
});

const update = route({
  ...common,
  method: 'patch',
  path: '/api/v1/inbound/routes/{routeId}',
  summary: "Change an inbound route's action",
  description: 'The pattern stays: to move a route, delete it and add another.',
  params: schema.routeIdParam,
  body: schema.updateRouteBody,
  bodyExample: { action: 'reject', rejectReason: 'Write to help@acme.example instead' },
  success: {
    status: 200,
    content: json(schema.routeResponse, {
      success: true,
      data: { ...EXAMPLE, action: 'reject', rejectReason: 'Write to help@acme.example instead' },
    }),
  },
  errors: ['INBOUND_ROUTE_NOT_FOUND'],
});

const remove = route({
  ...common,
  method: 'delete',
  path: '/api/v1/inbound/routes/{routeId}',
  summary: 'Delete an inbound route',
  params: schema.routeIdParam,
  success: {
    status: 200,
    content: json(schema.routeDeletedResponse, { success: true, data: { id: EXAMPLE.id, deleted: true } }),
  },
  errors: ['INBOUND_ROUTE_NOT_FOUND'],
});

export const inboundRoutes = router()
  .openapi(addresses, async (c) => ok(c, { domains: await receivingDomains(c.env, c.var.credential.accountId) }))
  .openapi(create, async (c) => {
    const created = await addInboundRoute(c.env, c.var.credential.accountId, c.req.valid('json'));
    return ok(c, view(created), 201);
  })
  .openapi(list, async (c) => {
    const { accountId } = c.var.credential;
    return ok(c, { routes: (await accountStore(c.env, accountId).listInboundRoutes(accountId)).map(view) });
  })
  .openapi(get, async (c) => {
    const { accountId } = c.var.credential;
    const found = await accountStore(c.env, accountId).findInboundRoute(accountId, c.req.valid('param').routeId);
    if (!found) throw routeNotFound();
    return ok(c, view(found));
  })
  .openapi(update, async (c) => {
    const { routeId } = c.req.valid('param');
    return ok(c, view(await changeInboundRoute(c.env, c.var.credential.accountId, routeId, c.req.valid('json'))));
  })
  .openapi(remove, async (c) => {
    const { accountId } = c.var.credential;
    const { routeId } = c.req.valid('param');
    if (!(await accountStore(c.env, accountId).deleteInboundRoute(accountId, routeId))) throw routeNotFound();
    return ok(c, { id: routeId, deleted: true as const });
  });
