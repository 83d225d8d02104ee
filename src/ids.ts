// Identifiers and secrets: prefixed, lower-case base32 (RFC 4648 alphabet, no padding).
import { toBase64 } from './base64';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

function randomBase32(bits: number): string {
  const chars = Math.ceil(bits / 5);
  const bytes = crypto.getRandomValues(new Uint8Array(chars));
  // 256 is a multiple of 32, so `byte & 31` is uniform.
  let out = '';
  for (const b of bytes) out += BASE32[b & 31];
  return out;
}

export type IdPrefix =
  | 'em'
  | 'tpl'
  | 'snd'
  | 'acc'
  | 'key'
  | 'otk'
  | 'req'
  | 'ver'
  | 'whk'
  | 'lsn'
  | 'inr'
  | 'inm'
  | 'dom'
  | 'mem'
  | 'dss'
  | 'aud';

/** Resource ids carry 100 random bits. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase32(100)}`;
}

/**
 * An email's id: its account's tag (the first 8 characters of the account id's random part), then 60 random
 * bits, so that an id alone (a bounce's token, a returned Message-ID) leads to the account's object.
 */
export function newEmailId(accountId: string): string {
  return `em_${accountId.slice(4, 12)}${randomBase32(60)}`;
}

/** The account tag inside an email id, or null when the id does not have our shape. */
export function accountTagOfEmailId(emailId: string): string | null {
  return /^em_([a-z2-7]{8})[a-z2-7]{12}$/.exec(emailId)?.[1] ?? null;
}

/**
 * OTP session ids name the recipient's Durable Object (its 64-hex id, so that a session id alone
 * routes to it) and carry 130 random bits, because they are half of a credential.
 */
export function newSessionId(objectId: string): string {
  return `otp_${objectId}_${randomBase32(130)}`;
}

/** The shape of a session id; group 1 is the id of the recipient's object. */
export const SESSION_ID = /^otp_([0-9a-f]{64})_[a-z2-7]{26}$/;

/** The recipient object's id inside a session id, or null when the id does not have our shape. */
export function sessionObjectIdOf(sessionId: string): string | null {
  return SESSION_ID.exec(sessionId)?.[1] ?? null;
}

/** The token of a one-click verification link (160 random bits; only its HMAC is stored). */
export function newLinkToken(): string {
  return randomBase32(160);
}

/**
 * A DKIM selector: `pc` and 40 random bits, so that two accounts (or two keys of one domain) never publish
 * at the same name.
 */
export function newSelector(): string {
  return `pc${randomBase32(40)}`;
}

/** Secrets handed to clients once: 160 random bits. */
export function newSecret(prefix: 'pc_key_' | 'pc_test_' | 'pc_otp_' | 'pc_otp_sec_' | 'pc_dash_'): string {
  return prefix + randomBase32(160);
}

export function nowIso(date: Date = new Date()): string {
  return date.toISOString();
}

/** A Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${toBase64(bytes)}`;
}
