import { nowIso } from '../../ids';
import type { AccountSql } from './object-sql';

/** How an account's OTP mail and hosted page look; null fields fall back to the plain look. */
export type OtpBrandingFields = {
  productName: string | null;
  logoUrl: string | null;
  accentColor: string | null;
  supportEmail: string | null;
};

export type StoredBranding = OtpBrandingFields & { accountId: string; updatedAt: string | null };

type BrandingRow = {
  account_id: string;
  product_name: string | null;
  logo_url: string | null;
  accent_color: string | null;
  support_email: string | null;
  updated_at: string | null;
};

const toBranding = (row: BrandingRow): StoredBranding => ({
  accountId: row.account_id,
  productName: row.product_name,
  logoUrl: row.logo_url,
  accentColor: row.accent_color,
  supportEmail: row.support_email,
  updatedAt: row.updated_at,
});

/** The account's branding (all null when never set). */
export async function findOtpBranding(db: AccountSql, accountId: string): Promise<StoredBranding> {
  const row = await db
    .prepare(
      `SELECT account_id, product_name, logo_url, accent_color, support_email, updated_at
       FROM otp_branding WHERE account_id = ?`,
    )
    .bind(accountId)
    .first<BrandingRow>();
  return row
    ? toBranding(row)
    : { accountId, productName: null, logoUrl: null, accentColor: null, supportEmail: null, updatedAt: null };
}

/** Replaces the account's branding (a PUT: fields not given are cleared). */
export async function putOtpBranding(db: AccountSql, accountId: string, fields: OtpBrandingFields) {
  await db
    .prepare(
      `INSERT INTO otp_branding (account_id, product_name, logo_url, accent_color, support_email, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (account_id) DO UPDATE SET product_name = ?2, logo_url = ?3, accent_color = ?4,
         support_email = ?5, updated_at = ?6`,
    )
    .bind(accountId, fields.productName, fields.logoUrl, fields.accentColor, fields.supportEmail, nowIso())
    .run();
}
