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
