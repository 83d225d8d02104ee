// The 401/403 cases of every guarded route, from the routes as declared: a new route is covered the
// day it is added. Nothing that fails authentication reaches the handler (no 2xx, no 400/404).
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, admin, call, expectError, fetchWith, newAccount, type TestAccount } from '../support/api';
import {
  accepts,
  type CredentialKind,
  type DeclaredRoute,
  declaredRoutes,
  fillPath,
  isGuarded,
  needsOtpSecret,
  tokenOf,
} from '../support/declared-routes';

const guarded = declaredRoutes().filter(isGuarded);
const isOperatorRoute = (route: DeclaredRoute) => accepts(route, 'admin');
/** The route takes live keys only: the document gives `mailApiKey` the role `live`. */
const livesOnly = (route: DeclaredRoute) => route.operation.security.some((a) => a.mailApiKey?.includes('live'));

it('every route but the public ones has a guard', () => {
  const open = declaredRoutes()
    .filter((route) => !isGuarded(route))
    .map((route) => route.name)
    .sort();
  expect(open).toEqual([
    'GET /',
    'GET /api/v1/openapi.json',
    'GET /confirm-sender',
    'GET /docs',
    'GET /health',
    'GET /sdk/v1/manifest.json',
    'GET /sdk/v1/otp.js',
    'GET /sdk/v1/{file}',
    'GET /vendor/scalar/standalone.js',
    'GET /verify',
    'POST /confirm-sender',
    'POST /verify',
  ]);
  expect(guarded.length).toBeGreaterThanOrEqual(26);
});

describe.each(guarded.map((route) => [route.name, route] as const))('%s: authentication', (_name, route) => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await newAccount('auth matrix');
  });
  const path = () => fillPath(route, (param) => (param === 'accountId' ? account.accountId : `${param}_authmatrix`));
  const send = (headers: Record<string, string>) =>
    call(route.method, path(), { body: route.jsonBody?.example, headers });
  // The analytics secret is sent along where the route needs it, so the token's kind is what is judged.
  const withSecret = (headers: Record<string, string>) =>
    needsOtpSecret(route) ? { ...headers, 'X-Otp-Secret': account.analyticsSecret } : headers;

  it('401 without Authorization', async () => expectError(await send(withSecret({})), 401, 'UNAUTHORIZED'));
  it('401 with an unknown token', async () =>
    expectError(
      await send(withSecret({ Authorization: 'Bearer pc_key_doesnotexistdoesnotexist' })),
      401,
      'UNAUTHORIZED',
    ));
  it('401 with a malformed header', async () =>
    expectError(await send(withSecret({ Authorization: `Token ${tokenOf(account, 'mail')}` })), 401, 'UNAUTHORIZED'));

  if (isOperatorRoute(route)) {
    it('401 with any token that is not the operator token', async () => {
      for (const token of [
        account.mailKey,
        account.bothKey,
        account.publicToken,
        `${ADMIN_TOKEN}x`,
        ADMIN_TOKEN.slice(0, -1),
      ]) {
        expectError(await send({ Authorization: `Bearer ${token}` }), 401, 'UNAUTHORIZED');
      }
      expectError(await send({ Authorization: `Basic ${ADMIN_TOKEN}` }), 401, 'UNAUTHORIZED');
    });
    it('404 NOT_FOUND when the service has no ADMIN_TOKEN (the operator API is hidden)', async () => {
      const res = await fetchWith({ ADMIN_TOKEN: '' }, route.method, path(), {
        token: ADMIN_TOKEN,
        body: route.jsonBody?.example,
      });
      expectError(res, 404, 'NOT_FOUND');
    });
    return;
  }

  it('401 with a revoked key', async () =>
    expectError(await send(withSecret({ Authorization: `Bearer ${account.revokedKey}` })), 401, 'UNAUTHORIZED'));
  it('401 with the operator token', async () =>
    expectError(await send(withSecret({ Authorization: `Bearer ${ADMIN_TOKEN}` })), 401, 'UNAUTHORIZED'));

  const refused = (['mail', 'server', 'public'] as CredentialKind[]).filter((kind) => !accepts(route, kind));
  for (const kind of refused) {
    it(`403 SCOPE_REQUIRED with a ${kind} credential`, async () =>
      expectError(
        await send(withSecret({ Authorization: `Bearer ${tokenOf(account, kind)}` })),
        403,
        'SCOPE_REQUIRED',
      ));
  }

  if (livesOnly(route)) {
    it('403 SCOPE_REQUIRED with a test key (the route changes what live mail is)', async () => {
      const res = await admin<{ key: string }>('POST', `/admin/v1/accounts/${account.accountId}/api-keys`, {
        scopes: ['mail_api'],
        mode: 'test',
      });
      expectError(await send({ Authorization: `Bearer ${res.json.data.key}` }), 403, 'SCOPE_REQUIRED');
    });
  }

  if (needsOtpSecret(route)) {
    it('401 with the public token but without its X-Otp-Secret, or with another token’s', async () => {
      const other = await newAccount('other secret');
      const auth = { Authorization: `Bearer ${account.publicToken}` };
      expectError(await send(auth), 401, 'UNAUTHORIZED');
      expectError(await send({ ...auth, 'X-Otp-Secret': other.analyticsSecret }), 401, 'UNAUTHORIZED');
    });
  }
});
