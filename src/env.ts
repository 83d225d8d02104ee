// Bindings come from `wrangler types` (worker-configuration.d.ts). Secrets are typed as strings
// there, but may be unset or empty at run time: src/config.ts parses them once.
export type Bindings = Cloudflare.Env;

export type Variables = {
  requestId: string;
  /** The raw JSON text of the request body, once a body route has read it. */
  jsonBody: string;
  /** The request's Idempotency-Key, on an idempotent route (src/middleware/idempotency.ts). */
  idempotencyKey?: { space: { accountId: string; test: boolean }; key: string; requestHash: string };
};

/** The environment of every route. A credential exists only on routes whose guard resolved one. */
export type AppEnv = { Bindings: Bindings; Variables: Variables };

/** The environment after a guard accepted credential `C` (see src/auth/guards.ts). */
export type GuardedEnv<C> = { Bindings: Bindings; Variables: Variables & { credential: C } };
