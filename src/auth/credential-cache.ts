import { IsolateCache } from '../isolate-cache';
import type { Credential } from './credential';

// Live credentials by token hash, kept in the isolate so that a request does not pay a D1 read for
// its key. Only found credentials are kept (a key created a moment ago works at once). A revocation
// drops the entries in the isolate that handled it; other isolates drop theirs within the TTL.
const cache = new IsolateCache<Credential | null>({ keep: (credential) => credential !== null });

/** The live credential of a token hash: from the isolate, else from `lookUp` (null: unknown or revoked). */
export const credentialByHash = (tokenHash: string, lookUp: () => Promise<Credential | null>, now = Date.now()) =>
  cache.get(tokenHash, lookUp, now);

/** Called when a credential is revoked, so this isolate refuses it from the next request on. */
export const forgetCredential = (credentialId: string) => cache.forgetWhere((c) => c?.id === credentialId);
