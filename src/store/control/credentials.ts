import { sha256Hex } from '../../auth/crypto';
import { newId, newSecret, nowIso } from '../../ids';
import { accountRowsNewestFirst } from '../paging';

export const SCOPES = ['mail_api', 'server_otp'] as const;
export type Scope = (typeof SCOPES)[number];
/** `test` keys (`pc_test_…`) run the mail pipeline without ever opening SMTP. */
export type KeyMode = 'live' | 'test';

export type ApiKey = {
  id: string;
  accountId: string;
  name: string | null;
  scopes: Scope[];
  mode: KeyMode;
  createdAt: string;
  /** At most an hour behind the key's latest use (see `touchApiKey`). */
  lastUsedAt: string | null;
  revokedAt: string | null;
};

/** A token's bot check: the Turnstile widget's site key, and its secret sealed (src/auth/turnstile.ts). */
export type TurnstileSetting = { siteKey: string; sealedSecret: string };

export type OtpToken = {
  id: string;
  accountId: string;
  secretHash: string;
  allowedIps: string[];
  /** Sends with this token need a Turnstile answer that Siteverify accepts; null: no bot check. */
  turnstile: TurnstileSetting | null;
  createdAt: string;
  /** At most an hour behind the token's latest use (see `touchCredential`). */
  lastUsedAt: string | null;
  revokedAt: string | null;
};

type ApiKeyRow = {
  id: string;
  account_id: string;
  name: string | null;
  scopes: string;
  mode: KeyMode;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};

const API_KEY_COLUMNS = 'id, account_id, name, scopes, mode, created_at, last_used_at, revoked_at';
const OTP_TOKEN_COLUMNS =
  'id, account_id, secret_hash, allowed_ips, turnstile_site_key, turnstile_secret, created_at, last_used_at, revoked_at';

type OtpTokenRow = {
  id: string;
  account_id: string;
  secret_hash: string;
  allowed_ips: string;
  turnstile_site_key: string | null;
  turnstile_secret: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  scopes: JSON.parse(row.scopes) as Scope[],
  mode: row.mode,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

const toOtpToken = (row: OtpTokenRow): OtpToken => ({
  id: row.id,
  accountId: row.account_id,
  secretHash: row.secret_hash,
  allowedIps: JSON.parse(row.allowed_ips) as string[],
  turnstile:
    row.turnstile_site_key && row.turnstile_secret
      ? { siteKey: row.turnstile_site_key, sealedSecret: row.turnstile_secret }
      : null,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

/** Creates a key and returns it with its plaintext, which is never stored. */
export async function createApiKey(
  db: D1Database,
  accountId: string,
  scopes: Scope[],
  name: string | null,
  mode: KeyMode = 'live',
): Promise<{ apiKey: ApiKey; key: string }> {
  const key = newSecret(mode === 'test' ? 'pc_test_' : 'pc_key_');
  const apiKey: ApiKey = {
    id: newId('key'),
    accountId,
    name,
    scopes,
    mode,
    createdAt: nowIso(),
    lastUsedAt: null,
    revokedAt: null,
  };
  await db
    .prepare(
      'INSERT INTO api_keys (id, account_id, name, key_hash, scopes, mode, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .bind(apiKey.id, accountId, name, await sha256Hex(key), JSON.stringify(scopes), mode, apiKey.createdAt)
    .run();
  return { apiKey, key };
}

export async function findApiKeyByHash(db: D1Database, keyHash: string): Promise<ApiKey | null> {
  const row = await db
    .prepare(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`)
    .bind(keyHash)
    .first<ApiKeyRow>();
  return row ? toApiKey(row) : null;
}

const CREDENTIAL_TABLE = { api_key: 'api_keys', public_token: 'otp_tokens' } as const;

/**
 * Records a use of the key or token at `at`, unless one after `since` is recorded already: the caller
 * writes at most once per period, and a write from another isolate within it changes nothing.
 */
export async function touchCredential(
  db: D1Database,
  kind: keyof typeof CREDENTIAL_TABLE,
  id: string,
  at: string,
  since: string,
): Promise<void> {
  await db
    .prepare(
      `UPDATE ${CREDENTIAL_TABLE[kind]} SET last_used_at = ?1 WHERE id = ?2 AND (last_used_at IS NULL OR last_used_at <= ?3)`,
    )
    .bind(at, id, since)
    .run();
}

/** A page of the account's keys (revoked ones too), newest first. */
export const listApiKeys = accountRowsNewestFirst('api_keys', API_KEY_COLUMNS, toApiKey);

/**
 * Revokes a key (of `accountId` when given); the account it belonged to, or null when there is no such key.
 * Revoking twice keeps the first revocation time.
 */
export async function revokeApiKey(db: D1Database, id: string, accountId?: string): Promise<string | null> {
  const row = await db
    .prepare(
      'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?1) WHERE id = ?2 AND account_id = COALESCE(?3, account_id) RETURNING account_id',
    )
    .bind(nowIso(), id, accountId ?? null)
    .first<{ account_id: string }>();
  return row?.account_id ?? null;
}

/** Revokes one of the account's public OTP tokens; whether it exists. */
export async function revokeOtpToken(db: D1Database, accountId: string, id: string): Promise<boolean> {
  const row = await db
    .prepare(
      'UPDATE otp_tokens SET revoked_at = COALESCE(revoked_at, ?1) WHERE id = ?2 AND account_id = ?3 RETURNING id',
    )
    .bind(nowIso(), id, accountId)
    .first();
  return row !== null;
}

/** Replaces the IP allowlist of one of the account's live tokens; whether it exists. */
export async function setAllowedIps(db: D1Database, accountId: string, id: string, allowedIps: string[]) {
  const row = await db
    .prepare(
      'UPDATE otp_tokens SET allowed_ips = ?1 WHERE id = ?2 AND account_id = ?3 AND revoked_at IS NULL RETURNING id',
    )
    .bind(JSON.stringify(allowedIps), id, accountId)
    .first();
  return row !== null;
}

export async function createOtpToken(
  db: D1Database,
  accountId: string,
  allowedIps: string[],
  turnstile: TurnstileSetting | null = null,
): Promise<{ otpToken: OtpToken; token: string; analyticsSecret: string }> {
  const token = newSecret('pc_otp_');
  const analyticsSecret = newSecret('pc_otp_sec_');
  const otpToken: OtpToken = {
    id: newId('otk'),
    accountId,
    secretHash: await sha256Hex(analyticsSecret),
    allowedIps,
    turnstile,
    createdAt: nowIso(),
    lastUsedAt: null,
    revokedAt: null,
  };
  await db
    .prepare(
      `INSERT INTO otp_tokens (id, account_id, token_hash, secret_hash, allowed_ips, turnstile_site_key,
         turnstile_secret, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      otpToken.id,
      accountId,
      await sha256Hex(token),
      otpToken.secretHash,
      JSON.stringify(allowedIps),
      turnstile?.siteKey ?? null,
      turnstile?.sealedSecret ?? null,
      otpToken.createdAt,
    )
    .run();
  return { otpToken, token, analyticsSecret };
}

/**
 * Changes a live token: a field left out keeps its value, `turnstile: null` takes the bot check off. The token as
 * it is now, or null when there is no such live token.
 */
export async function changeOtpToken(
  db: D1Database,
  id: string,
  change: { allowedIps?: string[]; turnstile?: TurnstileSetting | null },
): Promise<OtpToken | null> {
  const setsTurnstile = change.turnstile !== undefined;
  const row = await db
    .prepare(
      `UPDATE otp_tokens SET allowed_ips = COALESCE(?2, allowed_ips),
         turnstile_site_key = CASE WHEN ?3 THEN ?4 ELSE turnstile_site_key END,
         turnstile_secret = CASE WHEN ?3 THEN ?5 ELSE turnstile_secret END
       WHERE id = ?1 AND revoked_at IS NULL RETURNING ${OTP_TOKEN_COLUMNS}`,
    )
    .bind(
      id,
      change.allowedIps ? JSON.stringify(change.allowedIps) : null,
      setsTurnstile ? 1 : 0,
      change.turnstile?.siteKey ?? null,
      change.turnstile?.sealedSecret ?? null,
    )
    .first<OtpTokenRow>();
  return row ? toOtpToken(row) : null;
}

export async function findOtpTokenByHash(db: D1Database, tokenHash: string): Promise<OtpToken | null> {
  const row = await db
    .prepare(`SELECT ${OTP_TOKEN_COLUMNS} FROM otp_tokens WHERE token_hash = ?`)
    .bind(tokenHash)
    .first<OtpTokenRow>();
  return row ? toOtpToken(row) : null;
}

/** A page of the account's public OTP tokens (revoked ones too), newest first. */
export const listOtpTokens = accountRowsNewestFirst('otp_tokens', OTP_TOKEN_COLUMNS, toOtpToken);
