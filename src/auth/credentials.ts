import type { Context } from 'hono';
import { ApiError } from '../errors';
import { findApiKeyByHash } from '../store/control/credentials';
import { findOtpTokenByHash } from '../store/control/otp-tokens';
import type { Credential } from './credential';
import { credentialByHash } from './credential-cache';
import { sha256Hex } from './crypto';
import { noteKeyUse } from './key-use';

// Our tokens are `pc_key_` / `pc_test_` / `pc_otp_` + base32; anything longer is not ours and is not hashed.
const BEARER = /^Bearer +([A-Za-z0-9_]{1,128})$/i;

/** Resolves `Authorization: Bearer <token>` to a live credential, or throws 401. */
export async function resolveCredential(db: D1Database, authorization: string | undefined): Promise<Credential> {
  const token = authorization?.trim().match(BEARER)?.[1];
  if (!token) throw new ApiError('UNAUTHORIZED', 'Authorization: expected "Bearer <token>"');
  const tokenHash = await sha256Hex(token);
  const credential = await credentialByHash(tokenHash, () => lookUpCredential(db, token, tokenHash));
  if (!credential) throw new ApiError('UNAUTHORIZED', 'Authorization: unknown or revoked token');
  noteKeyUse(db, credential);
  return credential;
}

async function lookUpCredential(db: D1Database, token: string, tokenHash: string): Promise<Credential | null> {
  if (token.startsWith('pc_key_') || token.startsWith('pc_test_')) {
    const key = await findApiKeyByHash(db, tokenHash);
    if (key && !key.revokedAt) {
      return { kind: 'api_key', id: key.id, accountId: key.accountId, scopes: key.scopes, mode: key.mode };
    }
  } else if (token.startsWith('pc_otp_') && !token.startsWith('pc_otp_sec_')) {
    const otpToken = await findOtpTokenByHash(db, tokenHash);
    if (otpToken && !otpToken.revokedAt) {
      return {
        kind: 'public_token',
        id: otpToken.id,
        accountId: otpToken.accountId,
        allowedIps: otpToken.allowedIps,
        secretHash: otpToken.secretHash,
        turnstile: otpToken.turnstile,
        policy: otpToken.policy,
      };
    }
  }
  return null;
}

/** The client address: `CF-Connecting-IP` only; X-Forwarded-For and friends are client-controlled. */
export function clientIp(c: Context): string | undefined {
  return c.req.header('CF-Connecting-IP') ?? undefined;
}
