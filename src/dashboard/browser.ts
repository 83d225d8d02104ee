// What the dashboard keeps in the browser: the session cookie (its token's hash is in D1) and the CSRF cookie
// whose value every form sends back.
import { waitUntil } from 'cloudflare:workers';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { sha256Hex, timingSafeEqualStrings } from '../auth/crypto';
import { nowIso } from '../ids';
import { findSignedIn, type SignedIn, touchSession } from '../store/control/dashboard-sessions';
import { SESSION_DAYS } from './sign-in';

export const SESSION_COOKIE = 'pc_session';
export const CSRF_COOKIE = 'pc_csrf';
/** The form field carrying the CSRF cookie's value. */
export const CSRF_FIELD = 'csrf';

/** How often a session's `last_seen_at` is written. */
const TOUCH_EVERY_MS = 10 * 60_000;

/** Cookies are `Secure` except on a loopback host (npm start serves plain http). */
const isLoopback = (hostname: string) =>
  hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '127.0.0.1' || hostname === '[::1]';

const cookieOptions = (c: Context, maxAgeSeconds: number, sameSite: 'Lax' | 'Strict') => ({
  path: '/dashboard',
  httpOnly: true,
  secure: !isLoopback(new URL(c.req.url).hostname),
  sameSite,
  maxAge: maxAgeSeconds,
});

export function setSessionCookie(c: Context, token: string) {
  setCookie(c, SESSION_COOKIE, token, cookieOptions(c, SESSION_DAYS * 86_400, 'Lax'));
}

export function clearSessionCookie(c: Context) {
  deleteCookie(c, SESSION_COOKIE, { path: '/dashboard', secure: cookieOptions(c, 0, 'Lax').secure });
}

/** The session token's hash from the cookie, or null. */
export async function sessionTokenHash(c: Context): Promise<string | null> {
  const token = getCookie(c, SESSION_COOKIE);
  return token && /^pc_dash_[a-z2-7]{32}$/.test(token) ? sha256Hex(token) : null;
}

/** The live session of the request's cookie (its last-seen time written now and then, after the answer). */
export async function signedInOf<E extends { Bindings: Cloudflare.Env }>(c: Context<E>): Promise<SignedIn | null> {
  const hash = await sessionTokenHash(c);
  if (!hash) return null;
  const now = nowIso();
  const signedIn = await findSignedIn(c.env.DB, hash, now);
  if (signedIn && Date.parse(now) - Date.parse(signedIn.lastSeenAt) > TOUCH_EVERY_MS) {
    waitUntil(touchSession(c.env.DB, signedIn.id, now).catch(() => {}));
  }
  return signedIn;
}

/** The CSRF cookie's value, set now when the browser has none (a year; it is no credential on its own). */
export function csrfToken(c: Context): string {
  const existing = getCookie(c, CSRF_COOKIE);
  if (existing && /^[a-z0-9]{32}$/.test(existing)) return existing;
  const token = crypto.randomUUID().replaceAll('-', '');
  setCookie(c, CSRF_COOKIE, token, cookieOptions(c, 365 * 86_400, 'Strict'));
  return token;
}

/** Whether a form's token is the CSRF cookie's value. */
export function csrfMatches(c: Context, formToken: string | undefined): boolean {
  const cookie = getCookie(c, CSRF_COOKIE);
  return Boolean(cookie && formToken && timingSafeEqualStrings(formToken, cookie));
}
