// The operator's lists (/admin/v1/accounts and an account's keys, OTP tokens and senders): pages newest
// first with ties broken by id, 404 for an unknown account, and never a key, token or secret.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/auth/crypto';
import { ADMIN_TOKEN, admin, call, expectError, fetchWith } from '../../support/api';
import type {
  Account,
  AccountList,
  ApiKey,
  ApiKeyList,
  OtpToken,
  OtpTokenList,
  Sender,
  SenderList,
} from '../../support/responses';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BAD_PAGING = [
  'page=0',
  'page=-1',
  'page=abc',
  'limit=0',
  'limit=101',
  'limit=1.5',
  'limit=',
  'after=',
  'after=em_123',
  'after=WzEsIngiLCJ5Il0', // a cursor's form, but page 1
  'page=2&after=WzIsIngiLCJ5Il0', // both
];

const newAccountId = async (name = 'Listed account') => {
  const res = await admin<Account>('POST', '/admin/v1/accounts', { name });
  expect(res.status).toBe(201);
  return res.json.data.id;
};

const issueKey = async (accountId: string, body: Record<string, unknown>) => {
  const res = await admin<ApiKey>('POST', `/admin/v1/accounts/${accountId}/api-keys`, body);
  expect(res.status).toBe(201);
  return res.json.data;
};

const issueToken = async (accountId: string, allowedIps?: string[]) => {
  const res = await admin<OtpToken>('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, { allowedIps });
  expect(res.status).toBe(201);
  return res.json.data;
};

const addSender = async (accountId: string, email: string, name?: string) => {
  const res = await admin<Sender>('POST', `/admin/v1/accounts/${accountId}/senders`, { email, name });
  expect(res.status).toBe(201);
  return res.json.data;
};

type Page = { total: number; page: number; totalPages: number; nextCursor: string | null };
type Item = { id: string; createdAt: string };

/** Newest first; the same time is ordered by id, descending. */
const inListOrder = (a: Item, b: Item) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1;

/** Every page of a list, walked `limit` at a time: the items in order and the pages' totals. */
async function walk(path: string, key: string, limit: number) {
  const items: Item[] = [];
  const pages: Page[] = [];
  for (let page = 1; page <= 100; page++) {
    const res = await admin<Record<string, unknown>>('GET', `${path}?page=${page}&limit=${limit}`);
    expect(res.status).toBe(200);
    const { [key]: list, ...rest } = res.json.data;
    pages.push(rest as Page);
    if ((list as Item[]).length === 0) break;
    items.push(...(list as Item[]));
  }
  return { items, pages };
}

/** Every page of a list by cursor: the first, then each page's `nextCursor` until it is null. */
async function walkByCursor(path: string, key: string, limit: number) {
  const items: Item[] = [];
  const pages: Page[] = [];
  let query = `limit=${limit}`;
  for (let n = 0; n < 100; n++) {
    const res = await admin<Record<string, unknown>>('GET', `${path}?${query}`);
    expect(res.status).toBe(200);
    const { [key]: list, ...rest } = res.json.data;
    const page = rest as Page;
    pages.push(page);
    items.push(...(list as Item[]));
    if (page.nextCursor === null) return { items, pages };
    query = `limit=${limit}&after=${page.nextCursor}`;
  }
  throw new Error('the cursor never reached the end');
}

/** The cases every list shares: paging, its order, bad paging, and the operator token. */
function pagedListCases(list: { key: string; path: () => Promise<string>; fill: (path: string) => Promise<void> }) {
  it('pages of `limit` (default 20) cover the list once, newest first; past the end is an empty page', async () => {
    const path = await list.path();
    await list.fill(path);
    const whole = await walk(path, list.key, 100);
    const byTwo = await walk(path, list.key, 2);
    expect(byTwo.items).toEqual(whole.items);
    expect([...whole.items].sort(inListOrder)).toEqual(whole.items);
    const total = whole.items.length;
    expect(total).toBeGreaterThanOrEqual(3);
    const totalPages = Math.ceil(total / 2);
    byTwo.pages.forEach((page, index) => {
      expect(page).toEqual({
        total,
        page: index + 1,
        totalPages,
        nextCursor: index + 1 < totalPages ? expect.any(String) : null,
      });
    });
    const first = await admin<Page>('GET', path);
    expect(first.json.data).toMatchObject({ total, page: 1, totalPages: Math.ceil(total / 20) });
    // The same pages after each page's cursor, numbered as by `page`.
    const byCursor = await walkByCursor(path, list.key, 2);
    expect(byCursor.items).toEqual(whole.items);
    expect(byCursor.pages.map((page) => page.page)).toEqual(byTwo.pages.slice(0, totalPages).map((p) => p.page));
  });

  it('400 INVALID_INPUT naming page or limit when out of range or not a whole number', async () => {
    const path = await list.path();
    for (const query of BAD_PAGING) {
      const res = await admin('GET', `${path}?${query}`);
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message, query).toContain(query.includes('after') ? 'after' : query.split('=')[0]!);
    }
  });

  it('401 UNAUTHORIZED without the operator token; 404 NOT_FOUND when the service has none', async () => {
    const path = await list.path();
    expectError(await call('GET', path), 401, 'UNAUTHORIZED');
    expectError(await call('GET', path, { token: `${ADMIN_TOKEN}x` }), 401, 'UNAUTHORIZED');
    expectError(await fetchWith({ ADMIN_TOKEN: '' }, 'GET', path, { token: ADMIN_TOKEN }), 404, 'NOT_FOUND');
  });
}

type ListOfAccount = {
  key: string;
  /** The last segment of the path: /admin/v1/accounts/{accountId}/<segment> */
  segment: string;
  table: string;
  /** Creates at least three entries in the account. */
  fill: (accountId: string) => Promise<void>;
};

const pathOf = (list: ListOfAccount, accountId: string) => `/admin/v1/accounts/${accountId}/${list.segment}`;

/** The cases of the lists of one account: those of every list, a tie on time, and an unknown account. */
function accountListCases(list: ListOfAccount) {
  const accounts = new Map<string, string>();
  pagedListCases({
    key: list.key,
    path: async () => {
      const accountId = await newAccountId();
      const path = pathOf(list, accountId);
      accounts.set(path, accountId);
      return path;
    },
    fill: (path) => list.fill(accounts.get(path)!),
  });

  it('entries created at the same time are ordered by id, so pages neither repeat nor skip one', async () => {
    const accountId = await newAccountId();
    await list.fill(accountId);
    await env.DB.prepare(`UPDATE ${list.table} SET created_at = '2026-11-01T00:00:00.000Z' WHERE account_id = ?`)
      .bind(accountId)
      .run();
    const { items } = await walk(pathOf(list, accountId), list.key, 1);
    const ids = items.map((item) => item.id);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    expect(ids).toEqual([...ids].sort().reverse());
  });

  it("lists only this account's entries", async () => {
    const mine = await newAccountId();
    await list.fill(await newAccountId());
    const res = await admin<Page>('GET', pathOf(list, mine));
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ [list.key]: [], total: 0, page: 1, totalPages: 0, nextCursor: null });
  });

  it('404 NOT_FOUND naming accountId for an unknown account; 400 for a malformed id', async () => {
    const res = await admin('GET', pathOf(list, 'acc_doesnotexist'));
    expectError(res, 404, 'NOT_FOUND');
    expect(res.json.error.message).toContain('accountId');
    expectError(await admin('GET', pathOf(list, 'ab')), 400, 'INVALID_INPUT');
  });
}

/** Waits for what the request wrote after its response (the key's use), up to two seconds. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const value = await read();
    if (done(value) || attempt === 40) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('GET /admin/v1/accounts', () => {
  pagedListCases({
    key: 'accounts',
    path: async () => '/admin/v1/accounts',
    fill: async () => {
      for (const name of ['one', 'two', 'three']) await newAccountId(name);
    },
  });

  it('200 with { id, name, createdAt, region, jurisdiction, placedAt } of each account', async () => {
    const id = await newAccountId('Bücher & Co');
    const res = await admin<AccountList>('GET', '/admin/v1/accounts?limit=100');
    expect(res.status).toBe(200);
    const entry = res.json.data.accounts.find((a) => a.id === id);
    expect(entry).toEqual({
      id,
      name: 'Bücher & Co',
      createdAt: expect.stringMatching(ISO_MS),
      region: null,
      jurisdiction: null,
      placedAt: null,
    });
  });

  it('accounts created at the same time are ordered by id', async () => {
    const at = '2000-01-01T00:00:00.000Z';
    for (const id of ['acc_tie_b', 'acc_tie_c', 'acc_tie_a']) {
      await env.DB.prepare('INSERT INTO accounts (id, name, created_at, tag) VALUES (?, ?, ?, ?)')
        .bind(id, id, at, id.slice(4, 12))
        .run();
    }
    const { items } = await walk('/admin/v1/accounts', 'accounts', 1);
    expect(items.slice(-3).map((a) => a.id)).toEqual(['acc_tie_c', 'acc_tie_b', 'acc_tie_a']);
  });
});

describe('GET /admin/v1/accounts/{accountId}/api-keys', () => {
  accountListCases({
    key: 'apiKeys',
    segment: 'api-keys',
    table: 'api_keys',
    fill: async (accountId) => {
      for (const scopes of [['mail_api'], ['server_otp'], ['mail_api', 'server_otp']])
        await issueKey(accountId, { scopes });
    },
  });

  it('200 with id, name, scopes, mode, createdAt, lastUsedAt and revokedAt of each key, revoked ones too', async () => {
    const accountId = await newAccountId();
    const live = await issueKey(accountId, { scopes: ['mail_api', 'server_otp'], name: 'backend' });
    const test = await issueKey(accountId, { scopes: ['mail_api'], mode: 'test' });
    expect((await admin('DELETE', `/admin/v1/api-keys/${test.id}`)).status).toBe(200);
    const res = await admin<ApiKeyList>('GET', `/admin/v1/accounts/${accountId}/api-keys`);
    expect(res.status).toBe(200);
    const byId = new Map(res.json.data.apiKeys.map((k) => [k.id, k]));
    expect(byId.get(live.id)).toEqual({
      id: live.id,
      name: 'backend',
      scopes: ['mail_api', 'server_otp'],
      mode: 'live',
      createdAt: expect.stringMatching(ISO_MS),
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(byId.get(test.id)).toEqual({
      id: test.id,
      name: null,
      scopes: ['mail_api'],
      mode: 'test',
      createdAt: expect.stringMatching(ISO_MS),
      lastUsedAt: null,
      revokedAt: expect.stringMatching(ISO_MS),
    });
    expect(res.json.data).toMatchObject({ total: 2, page: 1, totalPages: 1 });
  });

  it('lastUsedAt is set by a request with the key (after its response); other keys stay unused', async () => {
    const accountId = await newAccountId();
    const used = await issueKey(accountId, { scopes: ['mail_api'] });
    const unused = await issueKey(accountId, { scopes: ['mail_api'] });
    const before = new Date().toISOString();
    expect((await call('GET', '/api/v1/emails', { token: used.key })).status).toBe(200);
    const after = new Date().toISOString();
    const list = () => admin<ApiKeyList>('GET', `/admin/v1/accounts/${accountId}/api-keys`);
    const lastUsed = (res: Awaited<ReturnType<typeof list>>, id: string) =>
      res.json.data.apiKeys.find((k) => k.id === id)!.lastUsedAt;
    const res = await eventually(list, (r) => lastUsed(r, used.id) !== null);
    const at = lastUsed(res, used.id)!;
    expect(at >= before && at <= after, `${before} ≤ ${at} ≤ ${after}`).toBe(true);
    expect(lastUsed(res, unused.id)).toBeNull();
  });

  it('never answers a key or its hash', async () => {
    const accountId = await newAccountId();
    const keys = [
      await issueKey(accountId, { scopes: ['mail_api'] }),
      await issueKey(accountId, { scopes: ['mail_api'], mode: 'test' }),
    ];
    await call('GET', '/api/v1/emails', { token: keys[0]!.key });
    const res = await admin<ApiKeyList>('GET', `/admin/v1/accounts/${accountId}/api-keys`);
    expect(res.status).toBe(200);
    for (const { key } of keys) {
      expect(res.text).not.toContain(key);
      expect(res.text).not.toContain(await sha256Hex(key));
    }
    expect(res.text).not.toMatch(/pc_(key|test)_/);
    for (const entry of res.json.data.apiKeys) expect(Object.keys(entry)).not.toContain('key');
  });
});

describe('GET /admin/v1/accounts/{accountId}/otp-tokens', () => {
  accountListCases({
    key: 'otpTokens',
    segment: 'otp-tokens',
    table: 'otp_tokens',
    fill: async (accountId) => {
      for (let i = 0; i < 3; i++) await issueToken(accountId);
    },
  });

  it('200 with id, allowedIps, turnstile, policy, createdAt and revokedAt of each token', async () => {
    const accountId = await newAccountId();
    const open = await issueToken(accountId);
    const narrow = await issueToken(accountId, ['203.0.113.0/24', '2001:db8::1']);
    const res = await admin<OtpTokenList>('GET', `/admin/v1/accounts/${accountId}/otp-tokens`);
    expect(res.status).toBe(200);
    const byId = new Map(res.json.data.otpTokens.map((t) => [t.id, t]));
    const createdAt = expect.stringMatching(ISO_MS);
    const policy = { domainSendsPerHour: null, blockDisposable: false, blockSubaddresses: false };
    expect(byId.get(open.id)).toEqual({
      id: open.id,
      allowedIps: [],
      turnstile: null,
      policy,
      createdAt,
      revokedAt: null,
    });
    expect(byId.get(narrow.id)).toEqual({
      id: narrow.id,
      allowedIps: ['203.0.113.0/24', '2001:db8::1'],
      turnstile: null,
      policy,
      createdAt,
      revokedAt: null,
    });
    expect(res.json.data).toMatchObject({ total: 2, page: 1, totalPages: 1 });
  });

  it('never answers a token, its analytics secret, or their hashes', async () => {
    const accountId = await newAccountId();
    const token = await issueToken(accountId);
    const res = await admin<OtpTokenList>('GET', `/admin/v1/accounts/${accountId}/otp-tokens`);
    expect(res.status).toBe(200);
    for (const secret of [token.token, token.analyticsSecret]) {
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain(await sha256Hex(secret));
    }
    expect(res.text).not.toContain('pc_otp_');
  });
});

describe('GET /admin/v1/accounts/{accountId}/senders', () => {
  accountListCases({
    key: 'senders',
    segment: 'senders',
    table: 'senders',
    fill: async (accountId) => {
      for (const local of ['a', 'b', 'c']) await addSender(accountId, `${local}@acme.example`);
    },
  });

  it('200 with id, email, name and createdAt of each sender', async () => {
    const accountId = await newAccountId();
    const named = await addSender(accountId, 'hello@acme.example', 'Acme');
    const bare = await addSender(accountId, 'ops@bücher.example');
    const res = await admin<SenderList>('GET', `/admin/v1/accounts/${accountId}/senders`);
    expect(res.status).toBe(200);
    const byId = new Map(res.json.data.senders.map((s) => [s.id, s]));
    const createdAt = expect.stringMatching(ISO_MS);
    expect(byId.get(named.id)).toEqual({ id: named.id, email: 'hello@acme.example', name: 'Acme', createdAt });
    expect(byId.get(bare.id)).toEqual({ id: bare.id, email: 'ops@xn--bcher-kva.example', name: null, createdAt });
    expect(res.json.data).toMatchObject({ total: 2, page: 1, totalPages: 1 });
  });
});
