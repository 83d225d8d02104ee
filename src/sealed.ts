// Secrets kept at rest sealed: AES-GCM under a key derived (HKDF-SHA-256) from one of the Worker's own secrets
// and a purpose, so that each purpose has its own key and the secret's text is never a key itself.
import { fromBase64, toBase64 } from './base64';

const SEAL_VERSION = 'v1';

/** What a sealed text holds: `info` derives its key (never change it: it opens what was sealed before). */
export type SealPurpose = { info: string; name: string };

async function sealingKey(secret: string, purpose: SealPurpose): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode(purpose.info) },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

/** `v1.<iv>.<ciphertext>` in base64: a fresh 96-bit IV per seal. */
export async function seal(plain: Uint8Array, secret: string, purpose: SealPurpose): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await sealingKey(secret, purpose), plain);
  return `${SEAL_VERSION}.${toBase64(iv)}.${toBase64(sealed)}`;
}

/** What `seal` sealed; rejects when the secret or purpose is not the one that sealed it, or the text is not ours. */
export async function unseal(sealed: string, secret: string, purpose: SealPurpose): Promise<ArrayBuffer> {
  const [version, iv, data] = sealed.split('.');
  if (version !== SEAL_VERSION || !iv || !data) throw new Error(`not a sealed ${purpose.name}`);
  return crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: fromBase64(iv) },
    await sealingKey(secret, purpose),
    fromBase64(data),
  );
}

/**
 * What an isolate opened from sealed text, kept (at most `max`, the oldest dropped first) so that a hot path opens
 * each value once. The key must name the secret and the sealed text; a failure is not kept, so the next call tries
 * again (and fails the same way if the secret is wrong).
 */
export class OpenedOnce<T> {
  private readonly opened = new Map<string, Promise<T>>();

  constructor(private readonly max: number) {}

  get(key: string, open: () => Promise<T>): Promise<T> {
    const cached = this.opened.get(key);
    if (cached) return cached;
    const value = open();
    if (this.opened.size >= this.max) this.opened.delete(this.opened.keys().next().value as string);
    this.opened.set(key, value);
    value.catch(() => this.opened.delete(key));
    return value;
  }
}
