import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import { config } from '../config';
import type { AppEnv, GuardedEnv } from '../env';
import { ApiError, type ErrorCode } from '../errors';
import type { Scope } from '../store/control/credentials';
import type { ApiKeyCredential, Credential, PublicTokenCredential } from './credential';
import { clientIp, resolveCredential } from './credentials';
import { sha256Hex, timingSafeEqualStrings } from './crypto';
import { isIpAllowed } from './ip-allowlist';

// Every route declares exactly one guard (src/routes/route.ts). A guard is the middleware, the
// OpenAPI security requirement and the errors it can answer: the document and the route-wide auth
// tests read the last two. `c.var.credential` is typed only on routes whose guard sets it.
// Order of checks (decisions.md): 401 → 403 scope/kind → 403 IP allowlist.

export type Guard<E extends AppEnv = AppEnv> = {
  middleware: MiddlewareHandler<E>;
  /** Alternatives; each maps security schemes to the scopes (key scopes) it needs. */
  security: Record<string, string[]>[];
  errors: ErrorCode[];
};

const AUTH_ERRORS: ErrorCode[] = ['UNAUTHORIZED', 'SCOPE_REQUIRED'];
/** One security scheme per key scope (src/openapi/document.ts), so the document names what a route needs. */
const SCHEME_OF_SCOPE: Record<Scope, string> = { mail_api: 'mailApiKey', server_otp: 'serverOtpKey' };

function checkIp(c: Context, credential: Credential) {
  if (credential.kind === 'public_token' && !isIpAllowed(credential.allowedIps, clientIp(c))) {
    throw new ApiError('OTP_PUBLIC_IP_NOT_ALLOWED', 'This public token does not accept requests from your IP address');
  }
}

/** An API key with the given scope. */
const apiKeyWith = (scope: Scope): Guard<GuardedEnv<ApiKeyCredential>> => ({
  middleware: createMiddleware<GuardedEnv<ApiKeyCredential>>(async (c, next) => {
    const credential = await resolveCredential(c.env.DB, c.req.header('Authorization'));
    if (credential.kind !== 'api_key' || !credential.scopes.includes(scope)) {
      throw new ApiError('SCOPE_REQUIRED', `This route needs an API key with scope ${scope}`);
    }
    c.set('credential', credential);
    await next();
  }),
  security: [{ [SCHEME_OF_SCOPE[scope]]: [] }],
  errors: AUTH_ERRORS,
});

/** A public OTP token (IP allowlist applied when `checkAllowlist`) or a server_otp key. */
const publicTokenOrServerKey = (checkAllowlist: boolean): Guard<GuardedEnv<Credential>> => ({
  middleware: createMiddleware<GuardedEnv<Credential>>(async (c, next) => {
    const credential = await resolveCredential(c.env.DB, c.req.header('Authorization'));
    if (credential.kind === 'api_key' && !credential.scopes.includes('server_otp')) {
      throw new ApiError('SCOPE_REQUIRED', 'This route needs a public OTP token or an API key with scope server_otp');
    }
    if (checkAllowlist) checkIp(c, credential);
    c.set('credential', credential);
    await next();
  }),
  security: [{ publicOtpToken: [] }, { serverOtpKey: [] }],
  errors: checkAllowlist ? [...AUTH_ERRORS, 'OTP_PUBLIC_IP_NOT_ALLOWED'] : AUTH_ERRORS,
});

/** Any API key of the account, whatever its scopes (routes that check scopes per field, like webhooks). */
export const anyApiKey: Guard<GuardedEnv<ApiKeyCredential>> = {
  middleware: createMiddleware<GuardedEnv<ApiKeyCredential>>(async (c, next) => {
    const credential = await resolveCredential(c.env.DB, c.req.header('Authorization'));
    if (credential.kind !== 'api_key') throw new ApiError('SCOPE_REQUIRED', 'This route needs an API key');
    c.set('credential', credential);
    await next();
  }),
  security: [{ mailApiKey: [] }, { serverOtpKey: [] }],
  errors: AUTH_ERRORS,
};

export const mailApi = apiKeyWith('mail_api');

/**
 * A live API key with `mail_api`: routes that change what live mail is (domains, senders). A test key shares
 * no state with live mail, so it cannot vouch for a sender. The document shows it as the role `live`.
 */
export const liveMailApi: Guard<GuardedEnv<ApiKeyCredential>> = {
  middleware: createMiddleware<GuardedEnv<ApiKeyCredential>>(async (c, next) => {
    const credential = await resolveCredential(c.env.DB, c.req.header('Authorization'));
    if (credential.kind !== 'api_key' || !credential.scopes.includes('mail_api') || credential.mode !== 'live') {
      throw new ApiError('SCOPE_REQUIRED', 'This route needs a live API key with scope mail_api');
    }
    c.set('credential', credential);
    await next();
  }),
  security: [{ mailApiKey: ['live'] }],
  errors: AUTH_ERRORS,
};
export const serverOtp = apiKeyWith('server_otp');
/** OTP sends from browsers: the token's IP allowlist applies. */
export const publicOrServer = publicTokenOrServerKey(true);
/** OTP verifies: the code is the proof, the allowlist does not apply (decisions.md). */
export const publicOrServerAnyIp = publicTokenOrServerKey(false);

/** A public OTP token together with its own analytics secret in `X-Otp-Secret`. */
export const publicWithSecret: Guard<GuardedEnv<PublicTokenCredential>> = {
  middleware: createMiddleware<GuardedEnv<PublicTokenCredential>>(async (c, next) => {
    const secret = c.req.header('X-Otp-Secret');
    if (!c.req.header('Authorization') || !secret) {
      throw new ApiError('UNAUTHORIZED', 'Authorization and X-Otp-Secret: both are required');
    }
    const credential = await resolveCredential(c.env.DB, c.req.header('Authorization'));
    if (credential.kind !== 'public_token') {
      throw new ApiError('SCOPE_REQUIRED', 'This route needs a public OTP token with its X-Otp-Secret');
    }
    if (secret.length > 128 || !timingSafeEqualStrings(await sha256Hex(secret), credential.secretHash)) {
      throw new ApiError('UNAUTHORIZED', 'X-Otp-Secret: not the secret of this public token');
    }
    checkIp(c, credential);
    c.set('credential', credential);
    await next();
  }),
  security: [{ publicOtpToken: [], otpSecret: [] }],
  errors: [...AUTH_ERRORS, 'OTP_PUBLIC_IP_NOT_ALLOWED'],
};

/** Operator routes: `ADMIN_TOKEN` as bearer; the whole admin API is hidden (404) when it is unset. */
export const operator: Guard = {
  middleware: createMiddleware<AppEnv>(async (c, next) => {
    const { adminToken } = config(c.env);
    if (!adminToken) throw new ApiError('NOT_FOUND', 'No such route');
    const given = c.req
      .header('Authorization')
      ?.trim()
      .match(/^Bearer +(\S{1,512})$/i)?.[1];
    // Compare digests so the comparison takes the same time whatever the length of the guess.
    if (!given || !timingSafeEqualStrings(await sha256Hex(given), await sha256Hex(adminToken))) {
      throw new ApiError('UNAUTHORIZED', 'Authorization: expected the operator token');
    }
    await next();
  }),
  security: [{ adminToken: [] }],
  errors: ['UNAUTHORIZED', 'NOT_FOUND'],
};

/** Routes anyone may call (the index, health, the document, the hosted verify page). */
export const anyone: Guard = {
  middleware: async (_c, next) => {
    await next();
  },
  security: [],
  errors: [],
};
