// The envelope sender (return path) of postcode's mail: `bounces+<key>-<mac>@<domain>`. The key names the
// message (an email's id, an OTP mail's `otp_…`); the MAC (HMAC-SHA-256 under a key derived from
// DKIM_KEY_SECRET, 80 bits) makes a bounce for a message postcode never sent impossible to forge.
import { timingSafeEqualStrings } from '../auth/crypto';
import type { DomainsConfig } from '../config';
import type { DomainStatus } from '../store/control/domains';
import { returnPathName } from './domain-check';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const MAC_BYTES = 10;
const KEY_PATTERN = /^[a-z0-9_]{1,40}$/;
const LOCAL_PART = /^bounces\+([a-z0-9_]{1,40})-([a-z2-7]{16})$/;

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return bits > 0 ? out + BASE32[(value << (5 - bits)) & 31] : out;
}

const macKeys = new Map<string, Promise<CryptoKey>>();

/** The HMAC key of a secret (HKDF with its own label: never the DKIM sealing key). */
function macKey(secret: string): Promise<CryptoKey> {
  let key = macKeys.get(secret);
  if (!key) {
    key = (async () => {
      const material = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), 'HKDF', false, [
        'deriveKey',
      ]);
      return crypto.subtle.deriveKey(
        {
          name: 'HKDF',
          hash: 'SHA-256',
          salt: new Uint8Array(0),
          info: new TextEncoder().encode('postcode return path'),
        },
        material,
        { name: 'HMAC', hash: 'SHA-256', length: 256 },
        false,
        ['sign'],
      );
    })();
    macKeys.clear();
    macKeys.set(secret, key);
  }
  return key;
}

async function macOf(secret: string, key: string): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', await macKey(secret), new TextEncoder().encode(key));
  return base32(new Uint8Array(mac).subarray(0, MAC_BYTES));
}

/** The return path of the message `key` at `domain`. */
export async function returnPathAddress(secret: string, key: string, domain: string): Promise<string> {
  if (!KEY_PATTERN.test(key)) throw new Error(`not a return path key: ${key}`);
  return `bounces+${key}-${await macOf(secret, key)}@${domain}`;
}

/** The message key of a return path address, or null when it is not one of ours or its MAC is wrong. */
export async function messageKeyOf(secret: string, address: string): Promise<string | null> {
  const at = address.lastIndexOf('@');
  const match = LOCAL_PART.exec(address.slice(0, at).toLowerCase());
  if (at < 0 || !match) return null;
  const [, key, mac] = match;
  return timingSafeEqualStrings(mac!, await macOf(secret, key!)) ? key! : null;
}

/**
 * The envelope domain of a message: the return path subdomain of its verified domain (bounces come back to
 * postcode aligned with From), else the service's global return path, else none (the From address itself).
 */
export function envelopeDomain(
  settings: DomainsConfig,
  domain: { name: string; status: DomainStatus } | null,
): string | null {
  if (domain?.status === 'verified' && settings.returnPathMx) return returnPathName(settings, domain.name);
  return settings.globalReturnPath;
}
