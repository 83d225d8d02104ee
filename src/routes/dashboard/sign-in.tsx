// Signing in and out: an address, the code mailed to it, a session cookie.
import type { Context } from 'hono';
import { z } from 'zod';
import { clientIp } from '../../auth/credentials';
import { clearSessionCookie, sessionTokenHash, setSessionCookie, signedInOf } from '../../dashboard/browser';
import { finishSignIn, SIGN_IN_CODE_SECONDS, startSignIn } from '../../dashboard/sign-in';
import { Csrf, NAV, Notice } from '../../dashboard/views/layout';
import { emailAddress } from '../../schemas/common';
import { revokeSessionByToken } from '../../store/control/dashboard-sessions';
import { dashboardPath, formFields, type PageDeclaration, type PublicPageEnv, render, shownOnPage } from './page';

const addressForm = z.object({ email: emailAddress, next: z.string().max(300).optional() });
const codeForm = z.object({
  email: emailAddress,
  sessionId: z.string().max(200),
  code: z.string().trim().max(20),
  next: z.string().max(300).optional(),
});

/** Requests without a client address (tests, local tools) share one sign-in bucket. */
const ipOf = (c: Context) => clientIp(c) ?? 'unknown';

function addressPage(c: Context<PublicPageEnv>, next: string, notice?: unknown) {
  return render(
    c,
    'Sign in',
    <section class="narrow panel">
      <h1>Sign in to postcode</h1>
      {notice}
      <form class="stack" method="post" action="/dashboard/login">
        <Csrf token={c.var.frame.csrf} />
        <input type="hidden" name="next" value={next} />
        <label>
          Your email address
          <input type="email" name="email" autocomplete="email" required autofocus />
        </label>
        <button type="submit">Email me a code</button>
      </form>
      <p class="muted">
        We email a code to members of an account. It is valid for {SIGN_IN_CODE_SECONDS / 60} minutes.
      </p>
    </section>,
  );
}

function codePage(
  c: Context<PublicPageEnv>,
  fields: { email: string; sessionId: string; next: string },
  notice?: unknown,
) {
  return render(
    c,
    'Enter your code',
    <section class="narrow panel">
      <h1>Check your email</h1>
      {notice}
      <p>
        If <strong>{fields.email}</strong> belongs to a member of an account, a six-digit code is on its way to it.
      </p>
      <form class="stack" method="post" action="/dashboard/login/code">
        <Csrf token={c.var.frame.csrf} />
        <input type="hidden" name="email" value={fields.email} />
        <input type="hidden" name="sessionId" value={fields.sessionId} />
        <input type="hidden" name="next" value={fields.next} />
        <label>
          Code
          <input
            name="code"
            inputmode="numeric"
            autocomplete="one-time-code"
            pattern="[0-9]{6}"
            maxlength={6}
            required
            autofocus
          />
        </label>
        <button type="submit">Sign in</button>
      </form>
      <p>
        <a href={`/dashboard/login?next=${encodeURIComponent(fields.next)}`}>Use another address or get a new code</a>
      </p>
    </section>,
  );
}

export const signInPages: PageDeclaration[] = [
  {
    method: 'get',
    path: '/dashboard/login',
    access: 'anyone',
    handler: async (c) => {
      const next = dashboardPath(c.req.query('next'));
      if (await signedInOf(c)) return c.redirect(next, 303);
      return addressPage(c, next);
    },
  },
  {
    method: 'post',
    path: '/dashboard/login',
    access: 'anyone',
    handler: async (c) => {
      const next = dashboardPath(c.var.form.get('next') ?? undefined);
      try {
        const { email } = formFields(c, addressForm);
        const started = await startSignIn(c.env, { email, ip: ipOf(c) });
        return codePage(c, { ...started, next });
      } catch (error) {
        return shownOnPage(c, error, (notice) => addressPage(c, next, notice));
      }
    },
  },
  {
    method: 'post',
    path: '/dashboard/login/code',
    access: 'anyone',
    handler: async (c) => {
      const fields = formFields(c, codeForm);
      const next = dashboardPath(fields.next);
      try {
        const opened = await finishSignIn(c.env, {
          ...fields,
          ip: ipOf(c),
          userAgent: c.req.header('User-Agent') ?? null,
        });
        if (opened) {
          setSessionCookie(c, opened.token);
          return c.redirect(next, 303);
        }
        c.status(400);
        const wrong = 'That code is not right, or it has expired. Check the latest email, or get a new code.';
        return codePage(c, { ...fields, next }, <Notice tone="error">{wrong}</Notice>);
      } catch (error) {
        return shownOnPage(c, error, (notice) => codePage(c, { ...fields, next }, notice));
      }
    },
  },
  {
    method: 'post',
    path: '/dashboard/logout',
    access: 'read',
    handler: async (c) => {
      const hash = await sessionTokenHash(c);
      if (hash) await revokeSessionByToken(c.env.DB, hash);
      clearSessionCookie(c);
      return c.redirect('/dashboard/login', 303);
    },
  },
  {
    method: 'get',
    path: '/dashboard',
    access: 'read',
    handler: (c) => c.redirect(NAV[0].href, 303),
  },
];
