import { toHex } from '../auth/crypto';

/** `digits` decimal digits, uniform: bytes ≥ 250 are rejected so that `byte % 10` has no bias. */
export function generateCode(digits: number): string {
  let code = '';
  while (code.length < digits) {
    for (const byte of crypto.getRandomValues(new Uint8Array(digits * 2))) {
      if (byte < 250 && code.length < digits) code += String(byte % 10);
    }
  }
  return code;
}

const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(pepper: string): Promise<CryptoKey> {
  let key = keys.get(pepper);
  if (!key) {
    key = crypto.subtle.importKey('raw', new TextEncoder().encode(pepper), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
    ]);
    keys.set(pepper, key);
  }
  return key;
}

/** What a session stores instead of the code: HMAC-SHA256(OTP_PEPPER, sessionId + code). */
export async function hashCode(pepper: string, sessionId: string, code: string): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', await hmacKey(pepper), new TextEncoder().encode(sessionId + code));
  return toHex(new Uint8Array(mac));
}
