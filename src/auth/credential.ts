// What a request's bearer token turns out to be: types only, shared by the lookup, its cache and the guards.
import type { KeyMode, Scope } from '../store/control/credentials';
import type { OtpSendPolicy, TurnstileSetting } from '../store/control/otp-tokens';

export type ApiKeyCredential = { kind: 'api_key'; id: string; accountId: string; scopes: Scope[]; mode: KeyMode };
export type PublicTokenCredential = {
  kind: 'public_token';
  id: string;
  accountId: string;
  allowedIps: string[];
  secretHash: string;
  /** Its sends need a Turnstile answer (src/auth/turnstile.ts); null: no bot check. */
  turnstile: TurnstileSetting | null;
  /** Where its sends may go (src/otp/send-policy.ts). */
  policy: OtpSendPolicy;
};
export type Credential = ApiKeyCredential | PublicTokenCredential;
