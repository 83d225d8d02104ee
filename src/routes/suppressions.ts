// The suppression list (per account): addresses queued mail (routes 1, 3, 4) skips while their entry lasts.
// A 5xx at RCPT TO, a hard bounce or a complaint adds an address; these routes list, add and remove them.
// OTP mail is never blocked by it.
import { mailApi } from '../auth/guards';
import { suppress, unsuppress } from '../mail/suppressions';
import { linkTo } from '../openapi/document';
import { pageData, pageQuery, pageRequest } from '../schemas/common';
import {
  addSuppressionBody,
  suppressionDeletedResponse,
  suppressionListResponse,
  suppressionParam,
  suppressionResponse,
} from '../schemas/suppressions';
import { accountStore } from '../store/account/client';
import { json, ok, route, router } from './route';

const SUPPRESSION = {
  email: 'ada@example.com',
  reason: 'hard_bounce' as const,
  note: '550 5.1.1 <ada@example.com>: Recipient address rejected: User unknown',
  emailId: 'em_7xq3kd2mf5rbw8ncz4ptj6vhae',
  expiresAt: '2026-12-21T22:45:01.000Z',
  createdAt: '2026-11-21T22:45:01.000Z',
};

const list = route({
  method: 'get',
  path: '/api/v1/suppressions',
  tag: 'Suppressions',
  summary: 'List suppressed addresses',
  guard: mailApi,
  limit: { bucket: 'read' },
  query: pageQuery,
  success: {
    status: 200,
    content: json(suppressionListResponse, {
      success: true,
      data: { suppressions: [SUPPRESSION], total: 1, page: 1, totalPages: 1, nextCursor: null },
    }),
  },
});

const add = route({
  method: 'post',
  path: '/api/v1/suppressions',
  tag: 'Suppressions',
  summary: 'Suppress an address',
  description:
    'Adds an address as `manual`, with an optional note and expiry; an address listed already is listed as this entry from then on. `suppression.added` goes out when the address was not suppressed before.',
  guard: mailApi,
  limit: { bucket: 'read' },
  body: addSuppressionBody,
  bodyExample: { email: 'ada@example.com', note: 'asked us to stop' },
  success: {
    status: 201,
    content: json(suppressionResponse, {
      success: true,
      data: { ...SUPPRESSION, reason: 'manual', note: 'asked us to stop', emailId: null, expiresAt: null },
    }),
    links: {
      removeSuppression: linkTo('delete', '/api/v1/suppressions/{email}', {
        parameters: { email: '$response.body#/data/email' },
      }),
    },
  },
});

const remove = route({
  method: 'delete',
  path: '/api/v1/suppressions/{email}',
  tag: 'Suppressions',
  summary: 'Remove an address from the list',
  description:
    'Any spelling of the mailbox removes it. Mail queued afterwards reaches it again; `suppression.removed` goes out.',
  guard: mailApi,
  limit: { bucket: 'read' },
  params: suppressionParam,
  success: {
    status: 200,
    content: json(suppressionDeletedResponse, { success: true, data: { email: 'ada@example.com', deleted: true } }),
  },
  errors: ['SUPPRESSION_NOT_FOUND'],
});

export const suppressionRoutes = router()
  .openapi(list, async (c) => {
    const request = pageRequest(c.req.valid('query'));
    const page = await accountStore(c.env, c.var.credential.accountId).listSuppressions(
      c.var.credential.accountId,
      request,
    );
    return ok(c, pageData('suppressions', page, request));
  })
  .openapi(add, async (c) => ok(c, await suppress(c.env, c.var.credential.accountId, c.req.valid('json')), 201))
  .openapi(remove, async (c) => {
    const email = await unsuppress(c.env, c.var.credential.accountId, c.req.valid('param').email);
    return ok(c, { email, deleted: true as const });
  });
