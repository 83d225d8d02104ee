import { ISOLATE_CACHE_TTL_MS } from '../isolate-cache';
import type { Credential } from './credentials';

// Live credentials by token hash, kept in the isolate so that a request does not pay a D1 read for
// its key. Only found credentials are kept (a key created a moment ago works at once). A revocation
// drops the entry in the isolate that handled it; other isolates drop theirs within CACHE_TTL_MS.
export const CACHE_TTL_MS = ISOLATE_CACHE_TTL_MS;
const MAX_ENTRIES = 1_000;

const entries = new Map<string, { credential: Credential; expiresAt: number }>();
/** Bumped by every revocation: a D1 read that started before one may be stale and is not kept. */
let revocations = 0;

/** Taken before a D1 lookup and handed to `rememberCredential` with its result. */
export const revocationCount = () => revocations;

export function cachedCredential(tokenHash: string, now = Date.now()): Credential | undefined {
  const entry = entries.get(tokenHash);
  if (!entry) return undefined;
  if (entry.expiresAt > now) return entry.credential;
  entries.delete(tokenHash);
  return undefined;
}

export function rememberCredential(tokenHash: string, credential: Credential, readAfter: number, now = Date.now()) {
  if (readAfter !== revocations) return;
  // Map keeps insertion order: the first entry is the oldest.
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  entries.set(tokenHash, { credential, expiresAt: now + CACHE_TTL_MS });
}

/** Called when a credential is revoked, so this isolate refuses it from the next request on. */
export function forgetCredential(credentialId: string) {
  revocations++;
  for (const [hash, entry] of entries) if (entry.credential.id === credentialId) entries.delete(hash);
}
