import { operator } from '../auth/guards';
import * as schema from '../schemas/admin';
import { pageData, pageQuery, pageRequest } from '../schemas/common';
import { type Account, listAccounts } from '../store/control/accounts';
import { type ApiKey, listApiKeys } from '../store/control/credentials';
import { listOtpTokens, type OtpToken } from '../store/control/otp-tokens';
import { listSenders, type Sender } from '../store/control/senders';
import type { PageRequest } from '../store/paging';
import { requireAccount } from './admin';
import { otpTokenView } from './admin-otp-tokens';
import { json, route, router } from './route';

// What the operator created, page by page, newest first. Keys, tokens and analytics secrets are shown
// once at creation and stored only as hashes: these lists never carry them.

const ACCOUNT_ID = 'acc_7d2kq4mxz3ncw5ty8hbe';
const CREATED_AT = '2026-11-21T22:40:00.000Z';
const ONE_PAGE = { total: 1, page: 1, totalPages: 1, nextCursor: null };
const common = { tag: 'Operator', guard: operator, query: pageQuery } as const;
const ofAccount = { ...common, params: schema.accountIdParam } as const;

const listAccountsRoute = route({
  ...common,
  method: 'get',
  path: '/admin/v1/accounts',
  summary: 'List accounts',
  description: 'Newest first, each with where its data lives (`placedAt`: when its object was made, null before).',
  success: {
    status: 200,
    content: json(schema.accountListResponse, {
      success: true,
      data: {
        accounts: [
          {
            id: ACCOUNT_ID,
            name: 'Acme',
            createdAt: CREATED_AT,
            region: 'weur',
            jurisdiction: 'eu',
            placedAt: CREATED_AT,
          },
        ],
        ...ONE_PAGE,
      },
    }),
  },
});

const listApiKeysRoute = route({
  ...ofAccount,
  method: 'get',
  path: '/admin/v1/accounts/{accountId}/api-keys',
  summary: "List an account's API keys (never the keys themselves)",
  description: 'Newest first, revoked keys included. `lastUsedAt` may lag the latest use by up to an hour.',
  success: {
    status: 200,
    content: json(schema.apiKeyListResponse, {
      success: true,
      data: {
        apiKeys: [
          {
            id: 'key_q3w7zk2mx4ncd5ty8hbe',
            name: 'backend',
            scopes: ['mail_api'],
            mode: 'live',
            createdAt: CREATED_AT,
            lastUsedAt: '2026-11-24T08:00:00.000Z',
            revokedAt: null,
          },
        ],
        ...ONE_PAGE,
      },
    }),
  },
});

const listOtpTokensRoute = route({
  ...ofAccount,
  method: 'get',
  path: '/admin/v1/accounts/{accountId}/otp-tokens',
  summary: "List an account's public OTP tokens (never the token or its secret)",
  description: 'Newest first.',
  success: {
    status: 200,
    content: json(schema.otpTokenListResponse, {
      success: true,
      data: {
        otpTokens: [
          {
            id: 'otk_b3ghkq4mz2ytw6xrc7n5',
            allowedIps: ['203.0.113.0/24'],
            turnstile: null,
            policy: { domainSendsPerHour: null, blockDisposable: false, blockSubaddresses: false },
            createdAt: CREATED_AT,
            revokedAt: null,
          },
        ],
        ...ONE_PAGE,
      },
    }),
  },
});

const listSendersRoute = route({
  ...ofAccount,
  method: 'get',
  path: '/admin/v1/accounts/{accountId}/senders',
  summary: "List an account's sender identities",
  description: 'Newest first.',
  success: {
    status: 200,
    content: json(schema.senderListResponse, {
      success: true,
      data: {
        senders: [{ id: 'snd_x2m4kq7fz3nwd5ty8hcb', email: 'hello@acme.example', name: 'Acme', createdAt: CREATED_AT }],
        ...ONE_PAGE,
      },
    }),
  },
});

export type PageRead<T> = (request: PageRequest) => Promise<{ items: T[]; total: number; nextCursor: string | null }>;

/** `{ [key]: items, total, page, totalPages, nextCursor }`, as the send log and the other paged lists answer. */
export async function listed<K extends string, T, V>(
  key: K,
  query: Parameters<typeof pageRequest>[0],
  read: PageRead<T>,
  view: (t: T) => V,
) {
  const request = pageRequest(query);
  const page = await read(request);
  return { success: true as const, data: pageData(key, { ...page, items: page.items.map(view) }, request) };
}

const accountView = (a: Account) => ({
  id: a.id,
  name: a.name,
  createdAt: a.createdAt,
  region: a.region,
  jurisdiction: a.jurisdiction,
  placedAt: a.placedAt,
});
const apiKeyView = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  scopes: k.scopes,
  mode: k.mode,
  createdAt: k.createdAt,
  lastUsedAt: k.lastUsedAt,
  revokedAt: k.revokedAt,
});
const senderView = (s: Sender) => ({ id: s.id, email: s.email, name: s.name, createdAt: s.createdAt });

export const adminListRoutes = router()
  .openapi(listAccountsRoute, async (c) => {
    const read: PageRead<Account> = (request) => listAccounts(c.env.DB, request);
    return c.json(await listed('accounts', c.req.valid('query'), read, accountView), 200);
  })
  .openapi(listApiKeysRoute, async (c) => {
    const { id } = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const read: PageRead<ApiKey> = (request) => listApiKeys(c.env.DB, id, request);
    return c.json(await listed('apiKeys', c.req.valid('query'), read, apiKeyView), 200);
  })
  .openapi(listOtpTokensRoute, async (c) => {
    const { id } = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const read: PageRead<OtpToken> = (request) => listOtpTokens(c.env.DB, id, request);
    return c.json(await listed('otpTokens', c.req.valid('query'), read, otpTokenView), 200);
  })
  .openapi(listSendersRoute, async (c) => {
    const { id } = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const read: PageRead<Sender> = (request) => listSenders(c.env.DB, id, request);
    return c.json(await listed('senders', c.req.valid('query'), read, senderView), 200);
  });
