// One declaration per dashboard page or form: method, path, the permission it needs, and its handler. The
// registration (headers → CSRF cookie → session → form and its token → role) and the route-wide browser
// checks (test/routes/dashboard) derive from the list of declarations.
import { type Context, Hono } from 'hono';
import type { z } from 'zod';
import { CSRF_FIELD, csrfMatches, csrfToken, signedInOf } from '../../dashboard/browser';
import { can, type Permission } from '../../dashboard/roles';
import { type Frame, Layout, Notice } from '../../dashboard/views/layout';
import { DASHBOARD_SCRIPT, SCRIPT_PATH } from '../../dashboard/views/script';
import { STYLESHEET } from '../../dashboard/views/style';
import type { Bindings, Variables } from '../../env';
import { ApiError } from '../../errors';
import { readCapped } from '../../middleware/json-body';
import { recordAudit } from '../../store/control/audit-log';
import type { SignedIn } from '../../store/control/dashboard-sessions';
import { invalidInput } from '../../validation';
import { pageHeaders } from '../hosted-page';

type PageVariables = Variables & { frame: Frame; form: URLSearchParams };
/** A signed-in page: the session and the membership it acts as. */
export type PageEnv = { Bindings: Bindings; Variables: PageVariables & { signedIn: SignedIn } };
export type PublicPageEnv = { Bindings: Bindings; Variables: PageVariables };

export type PageDeclaration =
  | {
      method: 'get' | 'post';
      path: string;
      /** What the member's role must grant; checked on every request, whatever the page showed. */
      access: Permission;
      handler: (c: Context<PageEnv>) => Response | Promise<Response>;
    }
  | {
      method: 'get' | 'post';
      path: string;
      access: 'anyone';
      handler: (c: Context<PublicPageEnv>) => Response | Promise<Response>;
    };

const MAX_FORM_BYTES = 256 * 1024;
const FORM_TYPE = 'application/x-www-form-urlencoded';
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * No script from anywhere but the dashboard, no framing, forms posting only here. The referrer goes to the
 * dashboard itself only: with none at all, a browser's form posts carry `Origin: null`, which the origin check
 * must refuse.
 */
const HEADERS = {
  ...pageHeaders(
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'",
  ),
  'Referrer-Policy': 'same-origin',
};

/** The form of a POST: URL-encoded, strict UTF-8, at most 256 KiB. */
async function readForm(c: Context): Promise<URLSearchParams> {
  if ((c.req.header('Content-Type') ?? '').split(';')[0]!.trim().toLowerCase() !== FORM_TYPE) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type: expected ${FORM_TYPE}`);
  }
  try {
    return new URLSearchParams(STRICT_UTF8.decode(await readCapped(c, MAX_FORM_BYTES)));
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError('INVALID_INPUT', 'form: expected UTF-8');
  }
}

/** A form from another origin is refused whatever it carries (the CSRF token is the second check). */
function sameOrigin(c: Context): boolean {
  const origin = c.req.header('Origin');
  return origin === undefined || origin === new URL(c.req.url).origin;
}

const formExpired = () =>
  new ApiError(
    'FORM_EXPIRED',
    'This form has expired or did not come from this dashboard: reload the page and try again',
  );

/** Only a path of the dashboard is followed after sign-in. */
export const dashboardPath = (path: string | undefined) =>
  path && /^\/dashboard(\/[A-Za-z0-9_\-/]*)?(\?[A-Za-z0-9_=&%.-]*)?$/.test(path) ? path : '/dashboard';

/** The form's fields through `schema` (one value per name): 400 INVALID_INPUT naming the field. */
export function formFields<S extends z.ZodType>(c: Context<PageEnv> | Context<PublicPageEnv>, schema: S): z.output<S> {
  const result = schema.safeParse(Object.fromEntries(c.var.form));
  if (!result.success) throw invalidInput(result.error);
  return result.data;
}

/** A page in the layout, with the frame of this request; in `status`, else the one set on the context. */
export function render(c: Context<PageEnv> | Context<PublicPageEnv>, title: string, body: unknown, status?: number) {
  if (status !== undefined) c.status(status as 200);
  return c.html(
    <Layout title={title} frame={c.var.frame}>
      {body as never}
    </Layout>,
  );
}

/** What a form's action did, for the audit log (the member acting is the actor). */
export type Audited = { action: string; target?: string | null; detail?: Record<string, unknown> };

/**
 * Runs a form's action: done → its audit entry (when it names one), then 303 to `then` (the page shows what
 * `done` names); refused (an ApiError) → the page again with the reason, in the error's status.
 */
export async function act(
  c: Context<PageEnv>,
  action: () => Promise<unknown>,
  then: string,
  again: (notice: unknown) => Response | Promise<Response>,
  audited?: Audited | (() => Audited),
): Promise<Response> {
  try {
    await action();
  } catch (error) {
    return shownOnPage(c, error, again);
  }
  if (audited) {
    const fact = typeof audited === 'function' ? audited() : audited;
    await recordAudit(c.env.DB, c.var.signedIn.accountId, { actor: c.var.signedIn.email, ...fact });
  }
  return c.redirect(then, 303);
}

/**
 * A form acting on one thing named by the path's `:id` (members who may write): `run`, then 303 to `then`, or the
 * page `again` with the reason; audited as `action` on that id when given.
 */
export const formOnId = (
  path: string,
  run: (c: Context<PageEnv>, id: string) => Promise<unknown>,
  then: (id: string) => string,
  again: (c: Context<PageEnv>, notice: unknown) => Response | Promise<Response>,
  action?: string,
): PageDeclaration => ({
  method: 'post',
  path,
  access: 'write',
  handler: (c) => {
    const id = c.req.param('id') ?? '';
    const audited = action ? { action, target: id } : undefined;
    return act(
      c,
      () => run(c, id),
      then(id),
      (notice) => again(c, notice),
      audited,
    );
  },
});

/** A refused request (an ApiError below 500) shown on its page in the error's status; anything else is thrown. */
export function shownOnPage(
  c: Context<PageEnv> | Context<PublicPageEnv>,
  error: unknown,
  again: (notice: unknown) => Response | Promise<Response>,
) {
  if (!(error instanceof ApiError) || error.status >= 500) throw error;
  c.status(error.status);
  for (const [name, value] of Object.entries(error.extra.headers ?? {})) c.header(name, value);
  return again(<Notice tone="error">{error.message}</Notice>);
}

/** The error page of the dashboard: the status and what went wrong, in the layout. */
function errorPage(c: Context<PublicPageEnv>, error: ApiError) {
  if (!c.get('frame')) c.set('frame', { signedIn: null, csrf: csrfToken(c), path: c.req.path });
  return render(
    c,
    'Error',
    <section class="narrow panel">
      <h1>{error.status === 500 ? 'Something went wrong' : 'This did not work'}</h1>
      <Notice tone="error">{error.message}</Notice>
      <p>
        <a href="/dashboard">Back to the dashboard</a>
      </p>
    </section>,
    error.status,
  );
}

/** The dashboard's router from its declarations. */
export function dashboardRouter(pages: PageDeclaration[]) {
  const app = new Hono<{ Bindings: Bindings; Variables: PageVariables & { signedIn: SignedIn } }>();
  app.get('/dashboard/assets/style.css', (c) =>
    c.body(STYLESHEET, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=300' }),
  );
  app.get(SCRIPT_PATH, (c) =>
    c.body(DASHBOARD_SCRIPT, 200, {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=300',
    }),
  );
  for (const page of pages) {
    app.on(page.method.toUpperCase(), page.path, async (c) => {
      for (const [name, value] of Object.entries(HEADERS)) c.header(name, value);
      c.set('frame', { signedIn: null, csrf: csrfToken(c), path: c.req.path });
      // The session first: a signed-out request is answered before its body is read.
      const signedIn = page.access === 'anyone' ? null : await signedInOf(c);
      if (page.access !== 'anyone' && !signedIn) {
        if (page.method === 'get') return c.redirect(`/dashboard/login?next=${encodeURIComponent(c.req.path)}`, 303);
        throw new ApiError('UNAUTHORIZED', 'You are signed out: sign in again');
      }
      if (page.method === 'post') {
        if (!sameOrigin(c)) throw formExpired();
        c.set('form', await readForm(c));
        if (!csrfMatches(c, c.var.form.get(CSRF_FIELD) ?? undefined)) throw formExpired();
      }
      if (page.access === 'anyone' || !signedIn) return page.handler(c as never);
      c.set('signedIn', signedIn);
      c.set('frame', { ...c.var.frame, signedIn });
      if (!can(signedIn.role, page.access)) {
        throw new ApiError('ROLE_REQUIRED', `Your role (${signedIn.role}) cannot do this`);
      }
      return page.handler(c);
    });
  }
  app.all('/dashboard/*', () => {
    throw new ApiError('NOT_FOUND', 'No such page');
  });
  app.onError((error, c) => {
    const apiError = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'An unexpected error occurred');
    if (apiError.code === 'INTERNAL_ERROR') console.error(`dashboard ${c.req.method} ${c.req.path}:`, error);
    for (const [name, value] of Object.entries(apiError.extra.headers ?? {})) c.header(name, value);
    return errorPage(c as never, apiError);
  });
  return app;
}
