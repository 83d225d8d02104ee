import { sha256Hex } from '../auth/crypto';
import { newId, newSecret, nowIso } from '../ids';
import { accountRowsNewestFirst } from './paging';

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

export type OtpToken = {
  id: string;
  accountId: string;
  secretHash: string;
  allowedIps: string[];
  createdAt: string;
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
const OTP_TOKEN_COLUMNS = 'id, account_id, secret_hash, allowed_ips, created_at, revoked_at';

type OtpTokenRow = {
  id: string;
  account_id: string;
  secret_hash: string;
  allowed_ips: string;
  created_at: string;
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
  createdAt: row.created_at,
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

/**
 * Records a use of the key at `at`, unless one after `since` is recorded already: the caller
 * writes at most once per period, and a write from another isolate within it changes nothing.
 */
export async function touchApiKey(db: D1Database, id: string, at: string, since: string): Promise<void> {
  await db
    .prepare('UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2 AND (last_used_at IS NULL OR last_used_at <= ?3)')
    .bind(at, id, since)
    .run();
}

/** A page of the account's keys (revoked ones too), newest first. */
export const listApiKeys = accountRowsNewestFirst('api_keys', API_KEY_COLUMNS, toApiKey);

/** Returns false when no such key exists. Revoking twice keeps the first revocation time. */
export async function revokeApiKey(db: D1Database, id: string): Promise<boolean> {
  const result = await db
    .prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?')
    .bind(nowIso(), id)
    .run();
  return result.meta.changes > 0;
}

export async function createOtpToken(
  db: D1Database,
  accountId: string,
  allowedIps: string[],
): Promise<{ otpToken: OtpToken; token: string; analyticsSecret: string }> {
  const token = newSecret('pc_otp_');
  const analyticsSecret = newSecret('pc_otp_sec_');
  const otpToken: OtpToken = {
    id: newId('otk'),
    accountId,
    secretHash: await sha256Hex(analyticsSecret),
    allowedIps,
    createdAt: nowIso(),
    revokedAt: null,
  };
  await db
    .prepare(
      'INSERT INTO otp_tokens (id, account_id, token_hash, secret_hash, allowed_ips, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .bind(
      otpToken.id,
      accountId,
      await sha256Hex(token),
      otpToken.secretHash,
      JSON.stringify(allowedIps),
      otpToken.createdAt,
    )
    .run();
  return { otpToken, token, analyticsSecret };
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
