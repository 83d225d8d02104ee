// When each API key and public OTP token was last used, for the key lists. Writing it on every request would
// put a D1 write on every authenticated call, so each isolate writes a credential's use at most once an hour,
// after the response; D1 skips a write when another isolate recorded one within that hour.
import { waitUntil } from 'cloudflare:workers';
import { touchCredential } from '../store/control/credentials';
import type { Credential } from './credential';

/** How far `lastUsedAt` may lag behind a key's latest use. */
export const KEY_USE_PERIOD_MS = 60 * 60 * 1000;
const MAX_KEYS = 1_000;

/** When this isolate last wrote each key's use; oldest first (Map keeps insertion order). */
const writtenAt = new Map<string, number>();

/** Notes a use of the key or token; returns the write when one is due (it also runs after the response). */
export function noteKeyUse(
  db: D1Database,
  credential: Pick<Credential, 'kind' | 'id'>,
  now = Date.now(),
): Promise<void> | undefined {
  const keyId = credential.id;
  const last = writtenAt.get(keyId);
  if (last !== undefined && now - last < KEY_USE_PERIOD_MS) return undefined;
  writtenAt.delete(keyId);
  if (writtenAt.size >= MAX_KEYS) writtenAt.delete(writtenAt.keys().next().value!);
  writtenAt.set(keyId, now);
  const at = new Date(now).toISOString();
  const since = new Date(now - KEY_USE_PERIOD_MS).toISOString();
  const write = touchCredential(db, credential.kind, keyId, at, since).catch((error) => {
    // The next use tries again.
    if (writtenAt.get(keyId) === now) writtenAt.delete(keyId);
    console.error('credential use not recorded', error);
  });
  waitUntil(write);
  return write;
}
