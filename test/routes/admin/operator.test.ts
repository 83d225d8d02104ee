// Operator API (/admin/v1/*): issuance of accounts, keys, tokens and senders, and the service settings.
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app';
import { ADMIN_TOKEN, type ApiResponse, admin, call, expectError, parseBody } from '../../support/api';
import type { Account, ApiKey, EmailList, OtpToken, Sender, Settings } from '../../support/responses';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Random bits carried by `value` after `prefix`, judged by the smallest usual alphabet (hex, base32, base62)
 * that contains all of its characters, so the estimate never flatters the generator.
 */
function randomBits(value: unknown, prefix: string): number {
  expect(typeof value).toBe('string');
  const text = value as string;
  expect(text.startsWith(prefix), `${text} should start with ${prefix}`).toBe(true);
  const random = text.slice(prefix.length);
  const alphabets: [RegExp, number][] = [
    [/^[0-9a-f]+$/, 4],
    [/^[0-9A-F]+$/, 4],
    [/^[a-z2-7]+$/, 5],
    [/^[A-Z2-7]+$/, 5],
    [/^[0-9A-Za-z]+$/, Math.log2(62)],
  ];
  const alphabet = alphabets.find(([pattern]) => pattern.test(random));
  expect(alphabet, `random part of ${text} is not hex, base32 or base62 (no padding)`).toBeDefined();
  return random.length * alphabet![1];
}

const createAccount = async (name = 'Admin test account') => {
  const res = await admin<Account>('POST', '/admin/v1/accounts', { name });
  expect(res.status).toBe(201);
  return res.json.data.id;
};

const createKey = async (accountId: string, scopes: string[]) => {
  const res = await admin<ApiKey>('POST', `/admin/v1/accounts/${accountId}/api-keys`, { scopes });
  expect(res.status).toBe(201);
  return res.json.data;
};

const listEmails = (key: string) => call<EmailList>('GET', '/api/v1/emails', { token: key });

describe('POST /admin/v1/accounts', () => {
  it('201 with { id, name }; the id is acc_ with at least 96 random bits', async () => {
    const res = await admin<Account>('POST', '/admin/v1/accounts', { name: 'Bücher & Co' });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, data: { id: expect.any(String), name: 'Bücher & Co' } });
    expect(randomBits(res.json.data.id, 'acc_')).toBeGreaterThanOrEqual(96);
    expect(res.headers.get('X-Request-Id')).toMatch(/^req_/);
  });

  it('every account gets its own id', async () => {
    const a = await createAccount('same name');
    const b = await createAccount('same name');
    expect(a).not.toBe(b);
  });

  it('400 INVALID_INPUT naming `name` when it is missing, empty or not a string', async () => {
    for (const body of [{}, { name: '' }, { name: 42 }, { name: null }]) {
      const res = await admin('POST', '/admin/v1/accounts', body);
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toContain('name');
    }
  });

  it('400 INVALID_INPUT for an unknown field', async () => {
    expectError(await admin('POST', '/admin/v1/accounts', { name: 'x', plan: 'pro' }), 400, 'INVALID_INPUT');
  });

  it('400 INVALID_INPUT for malformed JSON or a body that is not an object', async () => {
    const headers = { 'Content-Type': 'application/json' };
    for (const rawBody of ['{"name": ', '["x"]', '"x"']) {
      expectError(
        await call('POST', '/admin/v1/accounts', { token: ADMIN_TOKEN, rawBody, headers }),
        400,
        'INVALID_INPUT',
      );
    }
  });
});

describe('POST /admin/v1/accounts/{accountId}/api-keys', () => {
  it('201 with { id, key, scopes }: key_ id, pc_key_ key with at least 128 random bits', async () => {
    const accountId = await createAccount();
    const res = await admin<ApiKey>('POST', `/admin/v1/accounts/${accountId}/api-keys`, {
      scopes: ['mail_api'],
      name: 'ci',
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, data: { scopes: ['mail_api'] } });
    expect(randomBits(res.json.data.id, 'key_')).toBeGreaterThanOrEqual(96);
    expect(randomBits(res.json.data.key, 'pc_key_')).toBeGreaterThanOrEqual(128);
  });

  it('keys are unique and carry both scopes when asked', async () => {
    const accountId = await createAccount();
    const a = await createKey(accountId, ['mail_api', 'server_otp']);
    const b = await createKey(accountId, ['server_otp', 'mail_api']);
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
    expect([...a.scopes].sort()).toEqual(['mail_api', 'server_otp']);
    expect([...b.scopes].sort()).toEqual(['mail_api', 'server_otp']);
  });

  it('a mail_api key works against GET /api/v1/emails; a server_otp-only key is refused there', async () => {
    const accountId = await createAccount();
    const mail = await createKey(accountId, ['mail_api']);
    const res = await listEmails(mail.key);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, data: { emails: [], total: 0 } });

    const server = await createKey(accountId, ['server_otp']);
    expectError(await listEmails(server.key), 403, 'SCOPE_REQUIRED');
  });

  it('400 INVALID_INPUT naming `scopes` for empty, missing, unknown or mistyped scopes', async () => {
    const accountId = await createAccount();
    for (const body of [
      { scopes: [] },
      {},
      { scopes: ['admin'] },
      { scopes: ['mail_api', 'everything'] },
      { scopes: ['MAIL_API'] },
      { scopes: 'mail_api' },
      { scopes: [1] },
    ]) {
      const res = await admin('POST', `/admin/v1/accounts/${accountId}/api-keys`, body);
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toContain('scopes');
    }
  });

  it('400 INVALID_INPUT for an unknown field or an empty name', async () => {
    const accountId = await createAccount();
    const path = `/admin/v1/accounts/${accountId}/api-keys`;
    expectError(await admin('POST', path, { scopes: ['mail_api'], admin: true }), 400, 'INVALID_INPUT');
    expectError(await admin('POST', path, { scopes: ['mail_api'], name: '' }), 400, 'INVALID_INPUT');
  });

  it('404 NOT_FOUND for an unknown account', async () => {
    const res = await admin('POST', '/admin/v1/accounts/acc_doesnotexistdoesnotexi/api-keys', { scopes: ['mail_api'] });
    expectError(res, 404, 'NOT_FOUND');
  });

  it('400 INVALID_INPUT for an account id shorter than 3 or longer than 128 characters', async () => {
    for (const id of ['ab', `acc_${'a'.repeat(125)}`]) {
      expectError(
        await admin('POST', `/admin/v1/accounts/${id}/api-keys`, { scopes: ['mail_api'] }),
        400,
        'INVALID_INPUT',
      );
    }
  });
});

describe('DELETE /admin/v1/api-keys/{keyId}', () => {
  it('a refused (401) revocation leaves the key working', async () => {
    const accountId = await createAccount();
    const victim = await createKey(accountId, ['mail_api']);
    const path = `/admin/v1/api-keys/${victim.id}`;
    expectError(await call('DELETE', path), 401, 'UNAUTHORIZED');
    expectError(await call('DELETE', path, { token: victim.key }), 401, 'UNAUTHORIZED');
    expectError(await call('DELETE', path, { token: 'wrong-admin-token' }), 401, 'UNAUTHORIZED');
    expect((await listEmails(victim.key)).status).toBe(200);
  });

  it('200, and from then on the key answers 401 UNAUTHORIZED; other keys keep working', async () => {
    const accountId = await createAccount();
    const doomed = await createKey(accountId, ['mail_api', 'server_otp']);
    const other = await createKey(accountId, ['mail_api']);
    expect((await listEmails(doomed.key)).status).toBe(200);

    const res = await admin('DELETE', `/admin/v1/api-keys/${doomed.id}`);
    expect(res.status).toBe(200);
    expect(res.json.success).toBe(true);

    expectError(await listEmails(doomed.key), 401, 'UNAUTHORIZED');
    expect((await listEmails(other.key)).status).toBe(200);
  });

  it('404 NOT_FOUND for an unknown key id', async () => {
    expectError(await admin('DELETE', '/admin/v1/api-keys/key_doesnotexistdoesnotexi'), 404, 'NOT_FOUND');
  });

  it('400 INVALID_INPUT for a key id shorter than 3 or longer than 128 characters', async () => {
    expectError(await admin('DELETE', '/admin/v1/api-keys/ab'), 400, 'INVALID_INPUT');
    expectError(await admin('DELETE', `/admin/v1/api-keys/key_${'a'.repeat(125)}`), 400, 'INVALID_INPUT');
  });
});

describe('POST /admin/v1/accounts/{accountId}/otp-tokens', () => {
  it('201 with { id, token, analyticsSecret, allowedIps }; an empty allowlist by default', async () => {
    const accountId = await createAccount();
    const res = await admin<OtpToken>('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, {});
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, data: { allowedIps: [] } });
    const { id, token, analyticsSecret } = res.json.data;
    expect(randomBits(id, 'otk_')).toBeGreaterThanOrEqual(96);
    expect(token.startsWith('pc_otp_sec_')).toBe(false);
    expect(randomBits(token, 'pc_otp_')).toBeGreaterThanOrEqual(128);
    expect(randomBits(analyticsSecret, 'pc_otp_sec_')).toBeGreaterThanOrEqual(128);
    expect(analyticsSecret.slice('pc_otp_sec_'.length)).not.toBe(token.slice('pc_otp_'.length));
  });

  it('the token is a live public credential; the analytics secret is not a bearer token', async () => {
    const accountId = await createAccount();
    const res = await admin<OtpToken>('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, {});
    expect(res.status).toBe(201);
    // Recognised (403 for the wrong kind), not unknown (401).
    expectError(await listEmails(res.json.data.token), 403, 'SCOPE_REQUIRED');
    expectError(await listEmails(res.json.data.analyticsSecret), 401, 'UNAUTHORIZED');
  });

  it('accepts IPv4/IPv6 addresses and CIDR ranges and echoes them', async () => {
    const accountId = await createAccount();
    const allowedIps = [
      '203.0.113.7',
      '10.0.0.0/8',
      '0.0.0.0/0',
      '2001:db8::/32',
      'fe80::/10',
      '::1',
      '2001:db8::1/128',
    ];
    const res = await admin<OtpToken>('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, { allowedIps });
    expect(res.status).toBe(201);
    expect(res.json.data.allowedIps).toEqual(allowedIps);
  });

  it('400 INVALID_INPUT naming `allowedIps` for a malformed entry', async () => {
    const accountId = await createAccount();
    for (const entry of ['300.1.1.1', '10.0.0.0/33', '2001:db8::/129', '::1::2', '1.2.3', 'example.com', '']) {
      const res = await admin('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, {
        allowedIps: ['10.0.0.1', entry],
      });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toContain('allowedIps');
    }
  });

  it('400 INVALID_INPUT when allowedIps is not a list of strings, or for an unknown field', async () => {
    const accountId = await createAccount();
    const path = `/admin/v1/accounts/${accountId}/otp-tokens`;
    expectError(await admin('POST', path, { allowedIps: '10.0.0.1' }), 400, 'INVALID_INPUT');
    expectError(await admin('POST', path, { allowedIps: [167772161] }), 400, 'INVALID_INPUT');
    expectError(await admin('POST', path, { allowedIps: [], origin: '*' }), 400, 'INVALID_INPUT');
  });

  it('404 NOT_FOUND for an unknown account', async () => {
    expectError(await admin('POST', '/admin/v1/accounts/acc_doesnotexistdoesnotexi/otp-tokens', {}), 404, 'NOT_FOUND');
  });
});

describe('POST /admin/v1/accounts/{accountId}/senders', () => {
  it('201 with { id, email, name }; the id is snd_ with at least 96 random bits', async () => {
    const accountId = await createAccount();
    const res = await admin<Sender>('POST', `/admin/v1/accounts/${accountId}/senders`, {
      email: 'hello@example.com',
      name: 'Hello Team',
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, data: { email: 'hello@example.com', name: 'Hello Team' } });
    expect(randomBits(res.json.data.id, 'snd_')).toBeGreaterThanOrEqual(96);
  });

  it('the name is optional', async () => {
    const accountId = await createAccount();
    const res = await admin<Sender>('POST', `/admin/v1/accounts/${accountId}/senders`, { email: 'noname@example.com' });
    expect(res.status).toBe(201);
    expect(res.json.data.email).toBe('noname@example.com');
    expect(res.json.data.name ?? null).toBeNull();
  });

  it('an IDN domain is stored as punycode', async () => {
    const accountId = await createAccount();
    const res = await admin<Sender>('POST', `/admin/v1/accounts/${accountId}/senders`, { email: 'info@bücher.de' });
    expect(res.status).toBe(201);
    expect(res.json.data.email).toBe('info@xn--bcher-kva.de');
  });

  it('400 INVALID_INPUT naming `email` for an invalid address', async () => {
    const accountId = await createAccount();
    for (const email of [
      'not-an-email',
      'a@localhost',
      'a b@example.com',
      'Name <a@example.com>',
      'a@example.com\r\nBcc: x@evil.com',
      42,
    ]) {
      const res = await admin('POST', `/admin/v1/accounts/${accountId}/senders`, { email });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toContain('email');
    }
  });

  it('400 INVALID_INPUT naming `name` for CR/LF, quotes or control characters in the name', async () => {
    const accountId = await createAccount();
    for (const name of [
      'Evil\r\nBcc: x@evil.com',
      'line\nbreak',
      'carriage\rreturn',
      'Say "hi"',
      'back\\slash',
      'nul\0',
      '',
    ]) {
      const res = await admin('POST', `/admin/v1/accounts/${accountId}/senders`, { email: 'ok@example.com', name });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toContain('name');
    }
  });

  it('400 INVALID_INPUT for an unknown field', async () => {
    const accountId = await createAccount();
    const res = await admin('POST', `/admin/v1/accounts/${accountId}/senders`, {
      email: 'ok@example.com',
      verified: false,
    });
    expectError(res, 400, 'INVALID_INPUT');
  });

  it('404 NOT_FOUND for an unknown account', async () => {
    const res = await admin('POST', '/admin/v1/accounts/acc_doesnotexistdoesnotexi/senders', {
      email: 'ok@example.com',
    });
    expectError(res, 404, 'NOT_FOUND');
  });
});

describe('GET/PUT /admin/v1/settings', () => {
  const put = (body: unknown) => admin<Settings>('PUT', '/admin/v1/settings', body);
  const current = async () => {
    const res = await admin<Settings>('GET', '/admin/v1/settings');
    expect(res.status).toBe(200);
    return res.json.data;
  };

  // Tests here change service-wide settings: put the defaults back after each one.
  afterEach(async () => {
    const res = await put({ frozen: false, dailyAllowance: null });
    expect(res.status).toBe(200);
  });

  it('defaults: not frozen, no daily allowance', async () => {
    const res = await admin<Settings>('GET', '/admin/v1/settings');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, data: { frozen: false, dailyAllowance: null } });
    expect(res.json.data.updatedAt).toMatch(ISO_MS);
  });

  it('a PUT with an unauthorised caller changes nothing', async () => {
    expectError(await call('PUT', '/admin/v1/settings', { body: { frozen: true } }), 401, 'UNAUTHORIZED');
    expect(await current()).toMatchObject({ frozen: false, dailyAllowance: null });
  });

  it('PUT changes only the fields given and answers 200 with the current settings', async () => {
    const frozen = await put({ frozen: true });
    expect(frozen.status).toBe(200);
    expect(frozen.json).toMatchObject({ success: true, data: { frozen: true, dailyAllowance: null } });

    const allowance = await put({ dailyAllowance: 10 });
    expect(allowance.status).toBe(200);
    expect(allowance.json.data).toMatchObject({ frozen: true, dailyAllowance: 10 });
    expect(await current()).toMatchObject({ frozen: true, dailyAllowance: 10 });

    const reset = await put({ dailyAllowance: null });
    expect(reset.status).toBe(200);
    expect(reset.json.data).toMatchObject({ frozen: true, dailyAllowance: null });

    const thawed = await put({ frozen: false });
    expect(thawed.json.data).toMatchObject({ frozen: false, dailyAllowance: null });
    expect(await current()).toMatchObject({ frozen: false, dailyAllowance: null });
  });

  it('an empty PUT keeps everything', async () => {
    expect((await put({ dailyAllowance: 250 })).status).toBe(200);
    const res = await put({});
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ frozen: false, dailyAllowance: 250 });
  });

  it('400 INVALID_INPUT for a negative, fractional or string allowance; nothing changes', async () => {
    expect((await put({ dailyAllowance: 5 })).status).toBe(200);
    for (const dailyAllowance of [-1, 1.5, '10', true, {}]) {
      const res = await put({ dailyAllowance });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toContain('dailyAllowance');
    }
    expect(await current()).toMatchObject({ frozen: false, dailyAllowance: 5 });
  });

  it('400 INVALID_INPUT for a non-boolean frozen or an unknown field', async () => {
    for (const body of [{ frozen: 'true' }, { frozen: 1 }, { frozen: null }, { paused: true }]) {
      expectError(await put(body), 400, 'INVALID_INPUT');
    }
    expect(await current()).toMatchObject({ frozen: false, dailyAllowance: null });
  });
});

describe('admin API: routing', () => {
  it('404 NOT_FOUND for an unknown admin path with the right token', async () => {
    expectError(await admin('GET', '/admin/v1/nope'), 404, 'NOT_FOUND');
    expectError(await admin('POST', '/admin/v1/accounts/acc_abcdef/unknown', {}), 404, 'NOT_FOUND');
  });

  it('405 METHOD_NOT_ALLOWED for a known admin path with another method', async () => {
    expectError(await admin('PATCH', '/admin/v1/settings', {}), 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('admin API without ADMIN_TOKEN', () => {
  const app = buildApp();

  async function fetchWith(
    bindings: Cloudflare.Env,
    method: string,
    path: string,
    options: { token?: string; body?: unknown } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = {};
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    const request = new Request(`http://postcode.test${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const ctx = createExecutionContext();
    const res = await app.fetch(request, bindings, ctx);
    await waitOnExecutionContext(ctx);
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: parseBody(text), text };
  }

  const routes: { method: string; path: string; body?: unknown }[] = [
    { method: 'POST', path: '/admin/v1/accounts', body: { name: 'hidden' } },
    { method: 'POST', path: '/admin/v1/accounts/acc_abcdef/api-keys', body: { scopes: ['mail_api'] } },
    { method: 'DELETE', path: '/admin/v1/api-keys/key_abcdef' },
    { method: 'POST', path: '/admin/v1/accounts/acc_abcdef/otp-tokens', body: {} },
    { method: 'POST', path: '/admin/v1/accounts/acc_abcdef/senders', body: { email: 'a@example.com' } },
    { method: 'GET', path: '/admin/v1/settings' },
    { method: 'PUT', path: '/admin/v1/settings', body: {} },
  ];

  it('the same app answers the operator normally while ADMIN_TOKEN is set', async () => {
    const res = await fetchWith(env, 'GET', '/admin/v1/settings', { token: ADMIN_TOKEN });
    expect(res.status).toBe(200);
    expect(res.json.success).toBe(true);
  });

  it('every admin route answers 404 NOT_FOUND, with or without a bearer token', async () => {
    // An unset secret is absent at run time, whatever the generated type says.
    const unset = { ...env, ADMIN_TOKEN: undefined } as unknown as Cloudflare.Env;
    for (const route of routes) {
      for (const token of [undefined, ADMIN_TOKEN, 'anything']) {
        const res = await fetchWith(unset, route.method, route.path, { token, body: route.body });
        expect({
          route: `${route.method} ${route.path}`,
          token,
          status: res.status,
          code: res.json?.error?.code,
        }).toEqual({
          route: `${route.method} ${route.path}`,
          token,
          status: 404,
          code: 'NOT_FOUND',
        });
      }
    }
  });

  it('a settings PUT without ADMIN_TOKEN changes nothing', async () => {
    // An unset secret is absent at run time, whatever the generated type says.
    const unset = { ...env, ADMIN_TOKEN: undefined } as unknown as Cloudflare.Env;
    try {
      const res = await fetchWith(unset, 'PUT', '/admin/v1/settings', { token: ADMIN_TOKEN, body: { frozen: true } });
      expect(res.status).toBe(404);
      const settings = await admin<Settings>('GET', '/admin/v1/settings');
      expect(settings.json.data.frozen).toBe(false);
    } finally {
      await admin('PUT', '/admin/v1/settings', { frozen: false, dailyAllowance: null });
    }
  });
});
