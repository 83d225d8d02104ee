// The suppression list (per account): addresses queued mail (routes 1, 3, 4) skips. A permanent refusal
// adds an address; these routes list, add and remove them. OTP mail is never blocked by it.
import { mailApi } from '../auth/guards';
import { addSuppression, listSuppressions, removeSuppression } from '../db/suppressions';
import { ApiError } from '../errors';
import { canonicalAddress } from '../mail/address';
import { linkTo } from '../openapi/document';
import { pageData, pageQuery, pageRequest } from '../schemas/common';
import {
  addSuppressionBody,
  suppressionDeletedResponse,
  suppressionListResponse,
  suppressionParam,
  suppressionResponse,
} from '../schemas/suppressions';
import { json, ok, route, router } from './route';

const SUPPRESSION = {
  email: 'ada@example.com',
  reason: '550 5.1.1 Mailbox unavailable',
  source: 'bounce' as const,
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
  description: 'Adding an address that is listed already keeps it listed (as `manual`, with the new reason if given).',
  guard: mailApi,
  limit: { bucket: 'read' },
  body: addSuppressionBody,
  bodyExample: { email: 'ada@example.com', reason: 'asked us to stop' },
  success: {
    status: 201,
    content: json(suppressionResponse, {
      success: true,
      data: { ...SUPPRESSION, reason: 'asked us to stop', source: 'manual' },
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
  description: 'Any spelling of the mailbox removes it. Mail queued afterwards reaches it again.',
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
    const page = await listSuppressions(c.env.DB, c.var.credential.accountId, request);
    return ok(c, pageData('suppressions', page, request));
  })
  .openapi(add, async (c) => {
    const { email, reason } = c.req.valid('json');
    const entry = await addSuppression(c.env.DB, c.var.credential.accountId, canonicalAddress(email), reason ?? null);
    return ok(c, entry, 201);
  })
  .openapi(remove, async (c) => {
    const email = canonicalAddress(c.req.valid('param').email);
    if (!(await removeSuppression(c.env.DB, c.var.credential.accountId, email))) {
      throw new ApiError('SUPPRESSION_NOT_FOUND', 'email: not on the suppression list of this account');
    }
    return ok(c, { email, deleted: true as const });
  });
