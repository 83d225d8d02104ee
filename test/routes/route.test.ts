// The declaration's compile-time rules (checked by `npm run typecheck`), and what it registers.
import { describe, expect, it } from 'vitest';
import { anyone, mailApi } from '../../src/auth/guards';
import { json, route, router } from '../../src/routes/route';
import { healthResponse } from '../../src/schemas/meta';

const success = { status: 200 as const, content: json(healthResponse, { success: true, data: { status: 'ok' } }) };

describe('route()', () => {
  it('a route without a guard does not compile', () => {
    // @ts-expect-error: `guard` is required
    const unguarded = () => route({ method: 'get', path: '/x', tag: 'Service', summary: 'x', success });
    expect(typeof unguarded).toBe('function');
  });

  it('the credential is typed only after a guard that sets it', () => {
    const open = route({ method: 'get', path: '/open', tag: 'Service', summary: 'x', guard: anyone, success });
    const keyed = route({ method: 'get', path: '/keyed', tag: 'Service', summary: 'x', guard: mailApi, success });
    const app = router()
      .openapi(open, (c) => {
        // @ts-expect-error: no guard resolved a credential on this route
        void c.var.credential;
        return c.json({ success: true as const, data: { status: 'ok' as const } }, 200);
      })
      .openapi(keyed, (c) => {
        const scopes: string[] = c.var.credential.scopes;
        return c.json(
          { success: true as const, data: { status: scopes.length > 0 ? ('ok' as const) : ('ok' as const) } },
          200,
        );
      });
    expect(app.routes.map((r) => `${r.method} ${r.path}`)).toContain('GET /keyed');
  });

  it('a rate limit needs a guard with a credential; an idempotency key needs a body', () => {
    route({
      method: 'get',
      path: '/x',
      tag: 'Service',
      summary: 'x',
      guard: anyone,
      // @ts-expect-error: `limit` on a route without a credential
      limit: { bucket: 'read' },
      success,
    });
    // @ts-expect-error: `idempotent` on a route without a body
    route({ method: 'get', path: '/y', tag: 'Service', summary: 'x', guard: mailApi, idempotent: true, success });
  });
});
