import type { Credential } from './auth/credentials';

// Bindings come from `wrangler types` (worker-configuration.d.ts). Secrets are typed as strings
// there, but may be unset or empty at run time: the code checks them (e.g. ADMIN_TOKEN unset → 404).
export type Bindings = Cloudflare.Env;

export type Variables = {
  requestId: string;
  /** Set by the auth guards once a credential has been resolved and accepted. */
  credential: Credential;
  /** The raw JSON text of the request body, once a body route has read it. */
  jsonBody: string;
};

export type AppEnv = { Bindings: Bindings; Variables: Variables };
