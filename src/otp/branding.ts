// An account's OTP branding (kept in its object) with its name (the control plane), kept in the isolate for a
// few seconds so that a code's send or the hosted page does not pay two reads each time (a PUT drops it in the
// isolate that took it; others within the TTL).

import type { Bindings } from '../env';
import { IsolateCache } from '../isolate-cache';
import { accountStore } from '../store/account/client';
import type { OtpBrandingFields, StoredBranding } from '../store/account/otp-branding';
import { findAccount } from '../store/control/accounts';

export type OtpBranding = StoredBranding & { accountName: string };

const cache = new IsolateCache<OtpBranding | null>();

/**
 * The documented form of `logoUrl`: https, a host a CSP source expression can name (letters, digits, hyphens,
 * dots: a `;` or `,` there would end the page's img-src directive and start another), an optional port, then a
 * path, query or fragment without spaces, controls or backslashes (which the URL parser reads as slashes).
 */
export const LOGO_URL_PATTERN =
  '^https://[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?([/?#][^\\x00-\\x20\\x7f\\\\]*)?$';
const logoUrlShape = new RegExp(LOGO_URL_PATTERN);

/** A logo URL in the documented form, as the URL parser normalises it (which must keep that form); else null. */
export function parseLogoUrl(value: string): URL | null {
  if (value.length > 2048 || !logoUrlShape.test(value) || !URL.canParse(value)) return null;
  const url = new URL(value);
  return url.protocol === 'https:' && logoUrlShape.test(url.href) ? url : null;
}

/** The account's branding (null: no such account); a stored logo not in the documented form is left out. */
export const brandingOf = (env: Bindings, accountId: string, now = Date.now()): Promise<OtpBranding | null> =>
  cache.get(
    accountId,
    async () => {
      const account = await findAccount(env.DB, accountId);
      if (!account) return null;
      const branding = {
        ...(await accountStore(env, accountId).findOtpBranding(accountId)),
        accountName: account.name,
      };
      if (!branding.logoUrl) return branding;
      return { ...branding, logoUrl: parseLogoUrl(branding.logoUrl)?.href ?? null };
    },
    now,
  );

/** After a PUT: this isolate shows the new branding from the next request on. */
export const forgetBranding = (accountId: string) => cache.forget(accountId);

/** `{{productName}}` of OTP templates: the branded name, else the account's name. */
export const productNameOf = (branding: OtpBranding | null) => branding?.productName ?? branding?.accountName ?? '';

/** The accent (#rrggbb) and the text colour that reads on it: black or white, whichever contrasts more (WCAG). */
export function accentColors(accent: string | null): { accent: string; onAccent: string } {
  const color = accent ?? '#1f4fd1';
  const channel = (offset: number) => {
    const value = Number.parseInt(color.slice(offset, offset + 2), 16) / 255;
    return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  // Contrast with white (1.05 / (L + 0.05)) against contrast with black ((L + 0.05) / 0.05).
  const onAccent = 1.05 / (luminance + 0.05) >= (luminance + 0.05) / 0.05 ? '#ffffff' : '#111111';
  return { accent: color, onAccent };
}

/** Replaces an account's branding (a field left out is cleared); this isolate shows it at once, others within the cache's time. */
export async function setBranding(env: Bindings, accountId: string, fields: Partial<OtpBrandingFields>) {
  await accountStore(env, accountId).putOtpBranding(accountId, {
    productName: fields.productName ?? null,
    logoUrl: fields.logoUrl ?? null,
    accentColor: fields.accentColor ?? null,
    supportEmail: fields.supportEmail ?? null,
  });
  forgetBranding(accountId);
}
