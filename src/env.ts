import type { Credential } from './auth/credentials';

// Secrets are not in wrangler.toml, so `wrangler types` cannot see them; declare them here.
declare global {
  namespace Cloudflare {
    interface Env {
      ADMIN_TOKEN?: string;
      OTP_PEPPER?: string;
      SMTP_PASSWORD?: string;
    }
  }
}

export type Bindings = Cloudflare.Env;

export type Variables = {
  requestId: string;
  /** Set by the auth guards once a credential has been resolved and accepted. */
  credential: Credential;
};

export type AppEnv = { Bindings: Bindings; Variables: Variables };
