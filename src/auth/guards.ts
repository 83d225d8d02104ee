import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import type { Scope } from '../db/credentials';
import { ApiError } from '../errors';
import { clientIp, resolveCredential, type Credential } from './credentials';
import { sha256Hex, timingSafeEqualStrings } from './crypto';
import { isIpAllowed } from './ip-allowlist';

// Each route declares one of these guards; the handler then reads `c.var.credential`.
// Order of checks (decisions.md): 401 → 403 scope/kind → 403 IP allowlist.

function checkIp(c: Context<AppEnv>, credential: Credential) {
  if (credential.kind === 'public_token' && !isIpAllowed(credential.allowedIps, clientIp(c))) {
    throw new ApiError('OTP_PUBLIC_IP_NOT_ALLOWED', 'This public token does not accept requests from your IP address');
  }
}

/** An API key with the given scope. */
export const requireScope = (scope: Scope) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const credential = await resolveCredential(c.env.DB, c.req.header('Authorization'));
    if (credential.kind !== 'api_key' || !credential.scopes.includes(scope)) {
      throw new ApiError('SCOPE_REQUIRED', `This route needs an API key with scope ${scope}`);
    }
    c.set('credential', credential);
    await next();
  });

/** A public OTP token (IP allowlist applied when `checkAllowlist`) or a server_otp key. */
export const publicOrServer = (options: { checkAllowlist: boolean }) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const credential = await resolveCredential(c.env.DB, c.req.header('Authorization'));
    if (credential.kind === 'api_key' && !credential.scopes.includes('server_otp')) {
      throw new ApiError('SCOPE_REQUIRED', 'This route needs a public OTP token or an API key with scope server_otp');
    }
    if (options.checkAllowlist) checkIp(c, credential);
    c.set('credential', credential);
    await next();
  });

/** A public OTP token together with its own analytics secret in `X-Otp-Secret`. */
export const publicWithSecret = () =>
  createMiddleware<AppEnv>(async (c, next) => {
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
  });

/** Operator routes: `ADMIN_TOKEN` as bearer; the whole admin API is hidden (404) when it is unset. */
export const requireAdmin = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    const adminToken = c.env.ADMIN_TOKEN;
    if (!adminToken) throw new ApiError('NOT_FOUND', 'No such route');
    const given = c.req.header('Authorization')?.trim().match(/^Bearer +(\S{1,512})$/i)?.[1];
    // Compare digests so the comparison takes the same time whatever the length of the guess.
    if (!given || !timingSafeEqualStrings(await sha256Hex(given), await sha256Hex(adminToken))) {
      throw new ApiError('UNAUTHORIZED', 'Authorization: expected the operator token');
    }
    await next();
  });
