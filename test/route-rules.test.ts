// Rules every declared route follows, whatever it does: only its declared query parameters, each once,
// and only its declared methods on its own path (a fixed path is never read as another route's `{param}`).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  call,
  expectError,
  newAccount,
  type TestAccount,
  UNLIMITED,
  uniqueAddress,
} from './support/api';
import {
  credentialFor,
  type DeclaredRoute,
  declaredRoutes,
  fillPath,
  needsOtpSecret,
  tokenOf,
} from './support/declared-routes';

const routes = declaredRoutes();

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount('route rules');
});

/** The route called with the credential it takes, its path filled in and `query` appended. */
function callRoute(route: DeclaredRoute, query: string, method = route.method): Promise<ApiResponse> {
  const path = fillPath(route, (param) => (param === 'accountId' ? account.accountId : 'x_unknown'));
  const guarded = route.operation.security.length > 0;
  return call(method, `${path}?${query}`, {
    token: guarded ? tokenOf(account, credentialFor(route)) : null,
    headers: needsOtpSecret(route) ? { 'X-Otp-Secret': account.analyticsSecret } : {},
    bindings: UNLIMITED,
  });
}

describe('query parameters on every declared route', () => {
  it('sweeps every declared route', () => {
    expect(routes.length).toBeGreaterThanOrEqual(50);
  });

  const refusing = routes.filter((route) => route.operation['x-unknown-query'] !== 'ignored');

  it.each(refusing.map((route) => [route.name, route] as const))('%s: 400 naming an unknown one', async (_, route) => {
    const res = await callRoute(route, 'stauts=FAILED');
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toBe('stauts: unknown query parameter');
  });

  it.each(refusing.filter((route) => route.queryParams.length > 0).map((route) => [route.name, route] as const))(
    '%s: 400 naming a parameter given twice, and an unknown one beside declared ones',
    async (_, route) => {
      for (const name of route.queryParams) {
        const twice = await callRoute(route, `${name}=1&${name}=2`);
        expectError(twice, 400, 'INVALID_INPUT');
        expect(twice.json.error.message).toBe(`${name}: given more than once`);
      }
      const beside = await callRoute(route, `${route.queryParams.map((name) => `${name}=1`).join('&')}&Limit=5`);
      expectError(beside, 400, 'INVALID_INPUT');
      expect(beside.json.error.message).toBe('Limit: unknown query parameter');
    },
  );

  it('only the hosted pages ignore parameters they do not read (mail tools add them to links)', async () => {
    const ignoring = routes.filter((route) => !refusing.includes(route)).map((route) => route.name);
    expect(ignoring.sort()).toEqual(['GET /confirm-sender', 'GET /verify']);
    const session = await call<{ sessionId: string }>('POST', '/api/v1/email-verification/send', {
      token: account.serverKey,
      body: { email: uniqueAddress('page') },
    });
    const page = await call('GET', `/verify?sessionId=${session.json.data.sessionId}&utm_source=newsletter`);
    expect(page.status).toBe(200);
    expect(page.headers.get('Content-Type')).toMatch(/^text\/html/);
  });

  it('a typo in a filter is refused, not read as no filter', async () => {
    const res = await call('GET', '/api/v1/emails?stauts=FAILED', { token: account.mailKey });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.details).toEqual([{ path: 'stauts', message: 'unknown query parameter' }]);
  });

  it('a name without a value, an empty name and a long name are refused too', async () => {
    for (const [query, named] of [
      ['stauts', 'stauts'],
      ['=1', '""'],
      [`${'x'.repeat(500)}=1`, `${'x'.repeat(64)}…`],
    ]) {
      const res = await call('GET', `/api/v1/templates?${query}`, { token: account.mailKey });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toBe(`${named}: unknown query parameter`);
    }
  });

  it('a declared parameter alone, and an empty query, still pass', async () => {
    expect((await call('GET', '/api/v1/emails?status=FAILED', { token: account.mailKey })).status).toBe(200);
    expect((await call('GET', '/api/v1/emails?', { token: account.mailKey })).status).toBe(200);
    expect((await call('GET', '/health')).status).toBe(200);
  });

  it('authentication is checked first (401, not 400)', async () => {
    expectError(await call('GET', '/api/v1/emails?stauts=FAILED'), 401, 'UNAUTHORIZED');
  });

  it('the document says so', async () => {
    const res = await call('GET', '/api/v1/openapi.json');
    const description = (JSON.parse(res.text) as { info: { description: string } }).info.description;
    expect(description).toMatch(/query parameter a route does not declare.*400 INVALID_INPUT/);
    for (const route of routes) expect(Object.keys(route.operation.responses), route.name).toContain('400');
  });
});

// Every path as declared, with the methods declared on it; `{param}` paths stand for any value.
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Preflight on these paths is answered by CORS from any origin (decisions.md). */
const CORS_PATH = /^\/api\/v1\/(instant-otp|otp)\//;

const declaredPaths = [...new Set(routes.map((route) => route.path))].map((path) => {
  const declared = routes.filter((route) => route.path === path);
  const methods = declared.map((route) => route.method);
  return { path, route: declared[0]!, allow: methods.includes('GET') ? [...methods, 'HEAD'] : methods };
});

/** A fixed path a `{param}` path would also match: where a wrong method could reach the param route. */
const matchesParamPath = (fixed: string) =>
  declaredPaths.some(({ path }) => {
    if (!path.includes('{')) return false;
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    return pattern.test(fixed);
  });

const sharedPrefix = declaredPaths.filter(({ path }) => !path.includes('{') && matchesParamPath(path));

describe('methods on every declared path', () => {
  it('covers the fixed paths a {param} path would also match', () => {
    const paths = sharedPrefix.map(({ path }) => path);
    for (const path of [
      '/api/v1/email-verification/send',
      '/api/v1/emails/batch',
      '/api/v1/templates/send',
      '/api/v1/templates/send-test',
    ]) {
      expect(paths).toContain(path);
    }
  });

  it.each(declaredPaths.map((entry) => [entry.path, entry] as const))(
    '%s: 405 with exactly its own Allow for every undeclared method',
    async (path, { route, allow }) => {
      for (const method of METHODS.filter((m) => !allow.includes(m))) {
        if (method === 'OPTIONS' && CORS_PATH.test(path)) continue;
        const res = await callRoute(route, '', method);
        expect(res.status, `${method} ${path}`).toBe(405);
        if (method !== 'HEAD') expect(res.json.error.code).toBe('METHOD_NOT_ALLOWED');
        expect(res.headers.get('Allow')?.split(', ').sort(), `${method} ${path}`).toEqual([...allow].sort());
      }
    },
  );

  it('the examples found from outside', async () => {
    const options = await call('OPTIONS', '/api/v1/email-verification/send');
    expectError(options, 405, 'METHOD_NOT_ALLOWED');
    expect(options.headers.get('Allow')).toBe('POST');
    const get = await call('GET', '/api/v1/email-verification/send', { token: account.serverKey });
    expectError(get, 405, 'METHOD_NOT_ALLOWED');
    for (const method of ['PUT', 'DELETE', 'GET']) {
      for (const path of ['/api/v1/templates/send', '/api/v1/templates/send-test']) {
        const res = await call(method, path, { token: account.mailKey });
        expectError(res, 405, 'METHOD_NOT_ALLOWED');
        expect(res.headers.get('Allow')).toBe('POST');
      }
    }
    const patch = await call('PATCH', '/api/v1/emails/batch', { token: account.mailKey, body: {} });
    expectError(patch, 405, 'METHOD_NOT_ALLOWED');
    expect(patch.headers.get('Allow')).toBe('POST');
  });

  it('the {param} route still answers its own methods, and an unknown path is 404', async () => {
    expectError(
      await call('GET', '/api/v1/email-verification/otp_unknown', { token: account.serverKey }),
      404,
      'SESSION_NOT_FOUND',
    );
    expectError(await call('GET', '/api/v1/emails/batch/extra', { token: account.mailKey }), 404, 'NOT_FOUND');
    expectError(await call('GET', '/api/v1/nope'), 404, 'NOT_FOUND');
  });

  it('HEAD answers as GET without a body, and 405 where GET is not declared', async () => {
    const health = await call('HEAD', '/health');
    expect(health.status).toBe(200);
    expect(health.text).toBe('');
    const batch = await call('HEAD', '/api/v1/emails/batch');
    expect(batch.status).toBe(405);
    expect(batch.headers.get('Allow')).toBe('POST');
  });

  it('preflight on the instant and legacy OTP routes is answered from any origin', async () => {
    for (const path of ['/api/v1/instant-otp/send', '/api/v1/otp/verify']) {
      const res = await call('OPTIONS', path, {
        headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST' },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
    }
  });
});
