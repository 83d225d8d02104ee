// The public-token OTP routes: instant OTP (routes 7-9) and its legacy aliases (routes 10-12), which share the
// engine, the sessions, the limits and the history. Request helpers, and the tests both route families pass
// alike (each `it…`/`describe…` below registers its tests for one route), used by instant-otp-send.test.ts,
// instant-otp-verify.test.ts and legacy-otp.test.ts.
import { runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  admin,
  call,
  expectError,
  fetchWith,
  inbox,
  newAccount,
  type TestAccount,
  uniqueAddress,
} from './api';
import {
  SESSION_ID,
  type SeededVerification,
  seedVerifications,
  sendAndRead as sendCodeAndRead,
  sessionStub,
} from './otp';
import type { LegacyOtpSent, LegacyVerificationList, OtpSent, OtpToken, VerificationList, Verified } from './responses';

export const INSTANT = {
  send: '/api/v1/instant-otp/send',
  verify: '/api/v1/instant-otp/verify',
  history: '/api/v1/instant-otp/verifications',
} as const;
export const LEGACY = {
  send: '/api/v1/otp/send',
  verify: '/api/v1/otp/verify',
  history: '/api/v1/otp/verifications',
} as const;

export const ALLOWED_IP = '203.0.113.9';
export const BLOCKED_IP = '198.51.100.1';

/** POST to a send route (the instant one unless `path` says otherwise). */
export const send = <D extends LegacyOtpSent = OtpSent>(
  token: string,
  body: unknown,
  headers?: Record<string, string>,
  path: string = INSTANT.send,
) => call<D>('POST', path, { token, body, headers });

export const verify = (token: string, body: unknown, path: string = INSTANT.verify) =>
  call<Verified>('POST', path, { token, body });

/** GET a history route with the public token `token` and the analytics secret `secret` (no header when null). */
export const history = <D extends { verifications: { email: string }[] } = VerificationList>(
  path: string,
  token: string | null,
  secret: string | null,
  headers: Record<string, string> = {},
) => call<D>('GET', path, { token, headers: secret === null ? headers : { ...headers, 'X-Otp-Secret': secret } });

/** Sends a code through a send route (instant by default) and reads it from the mail. */
export const sendAndRead = (
  token: string,
  email: string,
  extra: Record<string, unknown> = {},
  path: string = INSTANT.send,
) => sendCodeAndRead<LegacyOtpSent>(path, token, email, extra);

/** The session's row in its recipient object (the attempts used so far). */
export const storedRows = (sessionId: string) =>
  runInDurableObject(sessionStub(sessionId), (_instance, state) =>
    state.storage.sql.exec<{ attempts: number }>('SELECT attempts FROM otp_sessions WHERE id = ?', sessionId).toArray(),
  );

/** A public token of the account that only accepts 203.0.113.0/24. */
export async function restrictedToken(accountId: string) {
  const res = await admin<OtpToken>('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, {
    allowedIps: ['203.0.113.0/24'],
  });
  expect(res.status).toBe(201);
  return res.json.data;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 429's wait: the Retry-After header, repeated in the body for scripts that cannot read headers. */
export function expectRetryAfter(res: ApiResponse, max: number) {
  const value = res.headers.get('Retry-After');
  expect(value, 'Retry-After').toMatch(/^\d+$/);
  expect(Number(value)).toBeGreaterThanOrEqual(1);
  expect(Number(value)).toBeLessThanOrEqual(max);
  expect(res.json.error.retryAfterSeconds).toBe(Number(value));
}

/** A CORS preflight as a browser on `origin` sends it before calling `path`. */
export const preflight = (path: string, origin: string) =>
  call('OPTIONS', path, {
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': path.endsWith('verifications') ? 'GET' : 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type, x-otp-secret',
    },
  });

/** Send route `path`: bounds of otpDigits and expiresInSeconds. */
export function itRejectsOutOfBoundsOptions(path: string) {
  it('400 INVALID_INPUT for otpDigits or expiresInSeconds out of bounds or not numbers; nothing is sent', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('oob');
    const cases = [
      { otpDigits: 3 },
      { otpDigits: 11 },
      { otpDigits: '6' },
      { otpDigits: 6.5 },
      { expiresInSeconds: 59 },
      { expiresInSeconds: 3601 },
      { expiresInSeconds: '600' },
    ];
    for (const extra of cases) {
      const res = await send(publicToken, { email, ...extra }, undefined, path);
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message, `${path} ${JSON.stringify(extra)}`).toMatch(/^(otpDigits|expiresInSeconds)/);
    }
    expect(await inbox(email)).toHaveLength(0);
  });
}

/** Send route `path`: 503 without an SMTP server. */
export function itNeedsSmtp(path: string) {
  it('503 SMTP_NOT_CONFIGURED without SMTP_HOST', async () => {
    const { publicToken } = await newAccount();
    const email = uniqueAddress('nosmtp');
    const res = await fetchWith({ SMTP_HOST: '' }, 'POST', path, { token: publicToken, body: { email } });
    expectError(res, 503, 'SMTP_NOT_CONFIGURED');
    expect(await inbox(email)).toHaveLength(0);
  });
}

/** Send route `path`: a restricted public token only sends from an allowed CF-Connecting-IP. */
export function itAppliesIpAllowlist(path: string) {
  it('send: 200 from an allowed CF-Connecting-IP; 403 OTP_PUBLIC_IP_NOT_ALLOWED otherwise', async () => {
    const { accountId } = await newAccount();
    const { token } = await restrictedToken(accountId);
    const allowed = await send(token, { email: uniqueAddress('ip') }, { 'CF-Connecting-IP': ALLOWED_IP }, path);
    expect(allowed.status, path).toBe(200);
    expect(allowed.json.data.sessionId).toMatch(SESSION_ID);

    const email = uniqueAddress('ip-blocked');
    const variants: Record<string, string>[] = [
      { 'CF-Connecting-IP': BLOCKED_IP },
      {},
      { 'X-Forwarded-For': ALLOWED_IP, 'CF-Connecting-IP': BLOCKED_IP },
      { 'X-Forwarded-For': ALLOWED_IP },
      { 'X-Real-IP': ALLOWED_IP, 'True-Client-IP': ALLOWED_IP },
    ];
    for (const headers of variants) {
      expectError(await send(token, { email }, headers, path), 403, 'OTP_PUBLIC_IP_NOT_ALLOWED');
    }
    expect(await inbox(email)).toHaveLength(0);
  });
}

/** History route `path`: `limit` is clamped to 1-100 (default 50), over 120 seeded verifications. */
export function describeHistoryLimits(path: string) {
  describe('limit is clamped to 1-100 (default 50)', () => {
    // 120 verifications of one account, seeded straight into D1 (a minute apart).
    let account: TestAccount;
    let rows: SeededVerification[] = [];
    beforeAll(async () => {
      account = await newAccount('history limits');
      rows = await seedVerifications(account.accountId, 'instant', 120, 'seed');
    });
    const newest = (n: number) =>
      rows
        .slice(-n)
        .reverse()
        .map((r) => r.email);
    const cases: [string, number][] = [
      ['', 50],
      ['?limit=1', 1],
      ['?limit=7', 7],
      ['?limit=100', 100],
      ['?limit=101', 100],
      ['?limit=500', 100],
      ['?limit=5000', 100],
      ['?limit=-5', 1],
      ['?limit=0', 1],
    ];
    for (const [query, max] of cases) {
      it(`${path}${query} → the newest ${max}`, async () => {
        const res = await history<LegacyVerificationList>(
          `${path}${query}`,
          account.publicToken,
          account.analyticsSecret,
        );
        expect(res.status).toBe(200);
        const emails = res.json.data.verifications.map((v) => v.email);
        expect(emails.length).toBeLessThanOrEqual(max);
        expect(emails).toEqual(newest(max));
      });
    }
    // Capped when out of range, but a limit that is not a whole number is refused, as the document's integer says.
    for (const limit of ['abc', '2.5', '1e3', '']) {
      it(`${path}?limit=${limit} → 400 INVALID_INPUT naming limit`, async () => {
        const res = await history(`${path}?limit=${limit}`, account.publicToken, account.analyticsSecret);
        expectError(res, 400, 'INVALID_INPUT');
        expect(res.json.error.message).toMatch(/^limit: /);
      });
    }
  });
}

/** History route `path`: only a public token with its own analytics secret, from an allowed address. */
export function itRequiresTokenAndSecret(path: string) {
  it(`${path}: public token plus its own X-Otp-Secret required`, async () => {
    const account = await newAccount();
    const other = await newAccount();
    const second = await admin<OtpToken>('POST', `/admin/v1/accounts/${account.accountId}/otp-tokens`, {});
    const { token: restricted, analyticsSecret: restrictedSecret } = await restrictedToken(account.accountId);

    expect((await history(path, account.publicToken, account.analyticsSecret)).status).toBe(200);
    expectError(await history(path, account.publicToken, null), 401, 'UNAUTHORIZED');
    expectError(await history(path, account.publicToken, ''), 401, 'UNAUTHORIZED');
    expectError(await history(path, null, account.analyticsSecret), 401, 'UNAUTHORIZED');
    expectError(
      await history(path, account.publicToken, 'pc_otp_sec_wrongwrongwrongwrongwrongwrong'),
      401,
      'UNAUTHORIZED',
    );
    expectError(await history(path, account.publicToken, second.json.data.analyticsSecret), 401, 'UNAUTHORIZED');
    expectError(await history(path, account.publicToken, other.analyticsSecret), 401, 'UNAUTHORIZED');
    expectError(await history(path, second.json.data.token, account.analyticsSecret), 401, 'UNAUTHORIZED');
    expectError(
      await history(path, 'pc_otp_unknownunknownunknownunknown', account.analyticsSecret),
      401,
      'UNAUTHORIZED',
    );
    expectError(await history(path, account.publicToken, account.publicToken), 401, 'UNAUTHORIZED');

    expectError(await history(path, account.serverKey, account.analyticsSecret), 403, 'SCOPE_REQUIRED');
    expectError(await history(path, account.mailKey, account.analyticsSecret), 403, 'SCOPE_REQUIRED');
    expectError(await history(path, account.bothKey, account.analyticsSecret), 403, 'SCOPE_REQUIRED');

    expect((await history(path, restricted, restrictedSecret, { 'CF-Connecting-IP': ALLOWED_IP })).status).toBe(200);
    expectError(
      await history(path, restricted, restrictedSecret, { 'CF-Connecting-IP': BLOCKED_IP }),
      403,
      'OTP_PUBLIC_IP_NOT_ALLOWED',
    );
    expectError(await history(path, restricted, restrictedSecret), 403, 'OTP_PUBLIC_IP_NOT_ALLOWED');
    expectError(
      await history(path, restricted, restrictedSecret, {
        'CF-Connecting-IP': BLOCKED_IP,
        'X-Forwarded-For': ALLOWED_IP,
      }),
      403,
      'OTP_PUBLIC_IP_NOT_ALLOWED',
    );
  });
}

/** Route `path` answers a CORS preflight from any origin (browsers call these routes with a public token). */
export function itAllowsAnyOrigin(path: string) {
  it(`OPTIONS ${path} from any origin → 204, Allow-Origin *, no credentials`, async () => {
    for (const origin of ['https://shop.example', 'http://localhost:3000']) {
      const res = await preflight(path, origin);
      expect(res.status).toBe(204);
      expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
      const allowed = (res.headers.get('Access-Control-Allow-Headers') ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase());
      expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-otp-secret']));
      expect(res.headers.get('Access-Control-Allow-Credentials')).toBeNull();
    }
  });

  it(`${path} lets a page's script read Retry-After, the RateLimit headers and X-Request-Id`, async () => {
    const method = path.endsWith('verifications') ? 'GET' : 'POST';
    const res = await call(method, path, { headers: { Origin: 'https://shop.example' } });
    expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
    const exposed = (res.headers.get('Access-Control-Expose-Headers') ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase());
    expect(exposed).toEqual(
      expect.arrayContaining([
        'retry-after',
        'ratelimit-limit',
        'ratelimit-remaining',
        'ratelimit-reset',
        'x-request-id',
      ]),
    );
  });
}
