// What a request's bearer token turns out to be: types only, shared by the lookup, its cache and the guards.
import type { KeyMode, Scope } from '../store/control/credentials';

export type ApiKeyCredential = { kind: 'api_key'; id: string; accountId: string; scopes: Scope[]; mode: KeyMode };
export type PublicTokenCredential = {
  kind: 'public_token';
  id: string;
  accountId: string;
  allowedIps: string[];
  secretHash: string;
};
export type Credential = ApiKeyCredential | PublicTokenCredential;
