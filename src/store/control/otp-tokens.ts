// The control plane's public OTP tokens: issued (the token and its analytics secret shown once, stored hashed),
// changed (IP allowlist, bot check, send policy), found by hash, listed and revoked.
import { sha256Hex } from '../../auth/crypto';
import { newId, newSecret, nowIso } from '../../ids';
import { accountRowsNewestFirst } from '../paging';

/** A token's bot check: the Turnstile widget's site key, and its secret sealed (src/auth/turnstile.ts). */
export type TurnstileSetting = { siteKey: string; sealedSecret: string };

/** Where a token's sends may go (opt-in, docs/otp.md): codes per recipient domain per hour (null: no cap), and
 * whether disposable-address domains and sub-addresses (`a+tag@`) are refused. */
export type OtpSendPolicy = { domainSendsPerHour: number | null; blockDisposable: boolean; blockSubaddresses: boolean };
/** A token's policy until one is set: nothing refused. */
export const OPEN_POLICY: OtpSendPolicy = {
  domainSendsPerHour: null,
  blockDisposable: false,
  blockSubaddresses: false,
};

/** What an operator sets on a token: its IP allowlist, its bot check, its send policy. */
export type OtpTokenSettings = { allowedIps: string[]; turnstile: TurnstileSetting | null; policy: OtpSendPolicy };

export type OtpToken = {
  id: string;
  accountId: string;
  secretHash: string;
  allowedIps: string[];
  /** Sends with this token need a Turnstile answer that Siteverify accepts; null: no bot check. */
  turnstile: TurnstileSetting | null;
  policy: OtpSendPolicy;
  createdAt: string;
  /** At most an hour behind the token's latest use (see `touchCredential`). */
  lastUsedAt: string | null;
  revokedAt: string | null;
};

const OTP_TOKEN_COLUMNS = `id, account_id, secret_hash, allowed_ips, turnstile_site_key, turnstile_secret,
  domain_sends_per_hour, block_disposable, block_subaddresses, created_at, last_used_at, revoked_at`;

type OtpTokenRow = {
  id: string;
  account_id: string;
  secret_hash: string;
  allowed_ips: string;
  turnstile_site_key: string | null;
  turnstile_secret: string | null;
  domain_sends_per_hour: number | null;
  block_disposable: number;
  block_subaddresses: number;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};

const toOtpToken = (row: OtpTokenRow): OtpToken => ({
  id: row.id,
  accountId: row.account_id,
  secretHash: row.secret_hash,
  allowedIps: JSON.parse(row.allowed_ips) as string[],
  turnstile:
    row.turnstile_site_key && row.turnstile_secret
      ? { siteKey: row.turnstile_site_key, sealedSecret: row.turnstile_secret }
      : null,
  policy: {
    domainSendsPerHour: row.domain_sends_per_hour,
    blockDisposable: row.block_disposable === 1,
    blockSubaddresses: row.block_subaddresses === 1,
  },
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
});

export async function createOtpToken(
  db: D1Database,
  accountId: string,
  settings: OtpTokenSettings,
): Promise<{ otpToken: OtpToken; token: string; analyticsSecret: string }> {
  const token = newSecret('pc_otp_');
  const analyticsSecret = newSecret('pc_otp_sec_');
  const otpToken: OtpToken = {
    id: newId('otk'),
    accountId,
    secretHash: await sha256Hex(analyticsSecret),
    ...settings,
    createdAt: nowIso(),
    lastUsedAt: null,
    revokedAt: null,
  };
  const { allowedIps, turnstile, policy } = settings;
  await db
    .prepare(
      `INSERT INTO otp_tokens (id, account_id, token_hash, secret_hash, allowed_ips, turnstile_site_key,
         turnstile_secret, domain_sends_per_hour, block_disposable, block_subaddresses, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      otpToken.id,
      accountId,
      await sha256Hex(token),
      otpToken.secretHash,
      JSON.stringify(allowedIps),
      turnstile?.siteKey ?? null,
      turnstile?.sealedSecret ?? null,
      policy.domainSendsPerHour,
      policy.blockDisposable ? 1 : 0,
      policy.blockSubaddresses ? 1 : 0,
      otpToken.createdAt,
    )
    .run();
  return { otpToken, token, analyticsSecret };
}

/** A change of a token's settings: a field left out keeps its value (a policy's fields each on their own). */
export type OtpTokenChange = {
  allowedIps?: string[];
  turnstile?: TurnstileSetting | null;
  policy?: Partial<OtpSendPolicy>;
};

/**
 * Changes a live token: a field left out keeps its value, `turnstile: null` takes the bot check off. The token as
 * it is now, or null when there is no such live token.
 */
export async function changeOtpToken(db: D1Database, id: string, change: OtpTokenChange): Promise<OtpToken | null> {
  const { turnstile, policy = {} } = change;
  const flag = (value: boolean | undefined) => (value === undefined ? null : value ? 1 : 0);
  const row = await db
    .prepare(
      `UPDATE otp_tokens SET allowed_ips = COALESCE(?2, allowed_ips),
         turnstile_site_key = CASE WHEN ?3 THEN ?4 ELSE turnstile_site_key END,
         turnstile_secret = CASE WHEN ?3 THEN ?5 ELSE turnstile_secret END,
         domain_sends_per_hour = CASE WHEN ?6 THEN ?7 ELSE domain_sends_per_hour END,
         block_disposable = COALESCE(?8, block_disposable),
         block_subaddresses = COALESCE(?9, block_subaddresses)
       WHERE id = ?1 AND revoked_at IS NULL RETURNING ${OTP_TOKEN_COLUMNS}`,
    )
    .bind(
      id,
      change.allowedIps ? JSON.stringify(change.allowedIps) : null,
      turnstile !== undefined ? 1 : 0,
      turnstile?.siteKey ?? null,
      turnstile?.sealedSecret ?? null,
      policy.domainSendsPerHour !== undefined ? 1 : 0,
      policy.domainSendsPerHour ?? null,
      flag(policy.blockDisposable),
      flag(policy.blockSubaddresses),
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
