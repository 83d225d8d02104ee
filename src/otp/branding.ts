// An account's OTP branding, kept in the isolate for a few seconds so that a code's send or the hosted page
// does not pay a D1 read each time (a PUT drops it in the isolate that took it; others within the TTL).
import { findOtpBranding, type OtpBranding } from '../db/otp-branding';
import type { Bindings } from '../env';
import { IsolateCache } from '../isolate-cache';

const cache = new IsolateCache<OtpBranding | null>();

/** The account's branding (null: no such account). */
export const brandingOf = (env: Bindings, accountId: string, now = Date.now()): Promise<OtpBranding | null> =>
  cache.get(accountId, () => findOtpBranding(env.DB, accountId), now);

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
