import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env';
import { ApiError } from '../errors';

type RegisteredRoute = { method: string; path: string };
/** A registered path split at `/`; `null` stands for a `:param` segment. */
type Pattern = { segments: (string | null)[]; methods: string[] };

/** Whether `a` is the more specific of two patterns that match the same path: its first differing segment is fixed. */
function moreSpecific(a: Pattern, b: Pattern): boolean {
  const index = a.segments.findIndex((segment, i) => (segment === null) !== (b.segments[i] === null));
  return index !== -1 && a.segments[index] !== null;
}

/**
 * The methods declared on the path a request path resolves to, or undefined when no route has that path.
 * A fixed segment wins over a `:param` whatever the method, so `/templates/send` is never read as a template
 * id: its methods are its own.
 */
export function declaredMethods(routes: RegisteredRoute[]): (path: string) => string[] | undefined {
  const patterns = new Map<string, Pattern>();
  for (const { method, path } of routes) {
    if (method === 'ALL') continue; // middleware
    const segments = path.split('/').map((segment) => (segment.startsWith(':') ? null : segment));
    const key = segments.map((segment) => segment ?? ':').join('/');
    const pattern = patterns.get(key) ?? { segments, methods: [] };
    if (!pattern.methods.includes(method)) pattern.methods.push(method);
    patterns.set(key, pattern);
  }
  return (path) => {
    const parts = path.split('/');
    let best: Pattern | undefined;
    for (const pattern of patterns.values()) {
      if (pattern.segments.length !== parts.length) continue;
      const matches = pattern.segments.every((segment, i) =>
        segment === null ? parts[i] !== '' : segment === parts[i],
      );
      if (matches && (!best || moreSpecific(pattern, best))) best = pattern;
    }
    return best?.methods;
  };
}

/** The `Allow` header: the declared methods, and HEAD beside GET (a HEAD is answered as the GET without its body). */
const allowHeader = (methods: string[]) => methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])).join(', ');

/**
 * 405 METHOD_NOT_ALLOWED with the path's own `Allow` for a method its route does not declare, before the
 * router can hand the request to a `{param}` route of the same prefix. Paths no route has fall through (404).
 */
export function declaredMethodsOnly(routes: () => RegisteredRoute[]): MiddlewareHandler<AppEnv> {
  let methodsOf: ReturnType<typeof declaredMethods> | undefined;
  return async (c, next) => {
    // Built on the first request, once every route is registered.
    methodsOf ??= declaredMethods(routes());
    const methods = methodsOf(c.req.path);
    const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
    if (!methods || methods.includes(method)) return next();
    throw new ApiError('METHOD_NOT_ALLOWED', `${c.req.method} is not allowed on this path`, {
      headers: { Allow: allowHeader(methods) },
    });
  };
}
