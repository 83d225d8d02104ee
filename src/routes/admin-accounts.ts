import { operator } from '../auth/guards';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { linksFilling } from '../openapi/document';
import * as schema from '../schemas/admin';
import { type Account, changePlacement, createAccount } from '../store/control/accounts';
import { type Jurisdiction, missingBucketBinding } from '../store/placement';
import { json, ok, route, router } from './route';

// Accounts and where their data lives. The place (region, jurisdiction) is the operator's until the account's data
// is first reached: its object is made there then, and from that moment the place is fixed (409 ACCOUNT_PLACED).

const ACCOUNT_ID = 'acc_7d2kq4mxz3ncw5ty8hbe';
const common = { tag: 'Operator', guard: operator } as const;

/** From a created account to every route that takes its id. */
const ACCOUNT_LINKS = linksFilling('accountId', '$response.body#/data/id', {
  changeAccount: ['patch', '/admin/v1/accounts/{accountId}'],
  createApiKey: ['post', '/admin/v1/accounts/{accountId}/api-keys'],
  listApiKeys: ['get', '/admin/v1/accounts/{accountId}/api-keys'],
  createOtpToken: ['post', '/admin/v1/accounts/{accountId}/otp-tokens'],
  listOtpTokens: ['get', '/admin/v1/accounts/{accountId}/otp-tokens'],
  createSender: ['post', '/admin/v1/accounts/{accountId}/senders'],
  listSenders: ['get', '/admin/v1/accounts/{accountId}/senders'],
  getOtpBranding: ['get', '/admin/v1/accounts/{accountId}/otp-branding'],
  putOtpBranding: ['put', '/admin/v1/accounts/{accountId}/otp-branding'],
  createMember: ['post', '/admin/v1/accounts/{accountId}/members'],
  listMembers: ['get', '/admin/v1/accounts/{accountId}/members'],
});

const PLACED = { region: 'weur' as const, jurisdiction: 'eu' as const };

const createAccountRoute = route({
  ...common,
  method: 'post',
  path: '/admin/v1/accounts',
  summary: 'Create an account',
  description:
    "`region` and `jurisdiction` say where the account's data will be made (both optional); a jurisdiction needs its R2 bindings (400 naming the missing one).",
  body: schema.createAccountBody,
  bodyExample: { name: 'Acme', ...PLACED },
  success: {
    status: 201,
    content: json(schema.accountResponse, { success: true, data: { id: ACCOUNT_ID, name: 'Acme', ...PLACED } }),
    links: ACCOUNT_LINKS,
  },
});

const changeAccountRoute = route({
  ...common,
  method: 'patch',
  path: '/admin/v1/accounts/{accountId}',
  summary: "Change where an account's data will live",
  description:
    "Until the account's data is first reached (its object is made then); after that 409 ACCOUNT_PLACED. A field left out keeps its value; null clears it.",
  params: schema.accountIdParam,
  body: schema.changeAccountBody,
  bodyExample: { region: 'enam', jurisdiction: null },
  success: {
    status: 200,
    content: json(schema.accountDetailResponse, {
      success: true,
      data: {
        id: ACCOUNT_ID,
        name: 'Acme',
        createdAt: '2026-11-21T22:40:00.000Z',
        region: 'enam',
        jurisdiction: null,
        placedAt: null,
      },
    }),
  },
  errors: ['NOT_FOUND', 'ACCOUNT_PLACED'],
});

/** 400 when this Worker lacks the buckets of the jurisdiction asked for. */
function requireBuckets(env: Bindings, jurisdiction: Jurisdiction | null | undefined) {
  const missing = missingBucketBinding(env as unknown as Record<string, unknown>, jurisdiction ?? null);
  if (missing) {
    const message = `${missing} is not bound: this Worker cannot keep the ${jurisdiction} jurisdiction's bodies and attachments`;
    throw new ApiError('INVALID_INPUT', `jurisdiction: ${message}`, {
      details: [{ path: 'jurisdiction', message }],
    });
  }
}

const placementView = (a: Account) => ({ region: a.region, jurisdiction: a.jurisdiction });

export const adminAccountRoutes = router()
  .openapi(createAccountRoute, async (c) => {
    const { name, region, jurisdiction } = c.req.valid('json');
    requireBuckets(c.env, jurisdiction);
    const account = await createAccount(c.env.DB, name, { region: region ?? null, jurisdiction: jurisdiction ?? null });
    return ok(c, { id: account.id, name: account.name, ...placementView(account) }, 201);
  })
  .openapi(changeAccountRoute, async (c) => {
    const change = c.req.valid('json');
    requireBuckets(c.env, change.jurisdiction);
    const result = await changePlacement(c.env.DB, c.req.valid('param').accountId, change);
    if (result.kind === 'not-found') throw new ApiError('NOT_FOUND', 'accountId: no such account');
    if (result.kind === 'placed') {
      throw new ApiError('ACCOUNT_PLACED', "accountId: the account's data exists already: its place is fixed");
    }
    const { account } = result;
    return ok(c, {
      id: account.id,
      name: account.name,
      createdAt: account.createdAt,
      ...placementView(account),
      placedAt: account.placedAt,
    });
  });
