import type { Child } from 'hono/jsx';
import type { SignedIn } from '../../store/control/dashboard-sessions';
import { CSRF_FIELD } from '../browser';

/** The pages in the navigation, in order. */
export const NAV = [
  { href: '/dashboard/overview', label: 'Overview' },
  { href: '/dashboard/emails', label: 'Emails' },
  { href: '/dashboard/inbound', label: 'Received' },
  { href: '/dashboard/templates', label: 'Templates' },
  { href: '/dashboard/domains', label: 'Domains' },
  { href: '/dashboard/suppressions', label: 'Suppressions' },
  { href: '/dashboard/webhooks', label: 'Webhooks' },
  { href: '/dashboard/keys', label: 'API keys' },
  { href: '/dashboard/branding', label: 'Branding' },
  { href: '/dashboard/members', label: 'Members' },
  { href: '/dashboard/audit-log', label: 'Audit log' },
  { href: '/dashboard/sessions', label: 'Sessions' },
] as const;

/** The hidden field every form carries (see src/dashboard/browser.ts). */
export const Csrf = (props: { token: string }) => <input type="hidden" name={CSRF_FIELD} value={props.token} />;

export type Frame = { signedIn: SignedIn | null; csrf: string; path: string };

/** Every page: the account and sign-out bar and the navigation when signed in, then the page itself. */
export function Layout(props: { title: string; frame: Frame; children: Child }) {
  const { signedIn, csrf, path } = props.frame;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <title>{`${props.title} · postcode`}</title>
        <link rel="stylesheet" href="/dashboard/assets/style.css" />
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/dashboard">
            postcode
          </a>
          {signedIn ? (
            <>
              <span class="account">
                {signedIn.accountName} · {signedIn.email} ({signedIn.role})
              </span>
              <form method="post" action="/dashboard/logout">
                <Csrf token={csrf} />
                <button type="submit" class="secondary">
                  Sign out
                </button>
              </form>
            </>
          ) : null}
        </header>
        {signedIn ? (
          <nav class="pages" aria-label="Dashboard">
            <ul>
              {NAV.map((item) => (
                <li>
                  <a href={item.href} aria-current={path.startsWith(item.href) ? 'page' : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        <main id="main">{props.children}</main>
      </body>
    </html>
  );
}

/** A message above a page's content: what an action did, or why it was refused. */
export const Notice = (props: { tone: 'ok' | 'error'; children: Child }) => (
  <div class={`notice ${props.tone}`} role={props.tone === 'error' ? 'alert' : 'status'}>
    {props.children}
  </div>
);

/** A moment as the dashboard shows it: UTC to the minute (`seconds` for the audit log), machine-readable. */
export const When = (props: { iso: string; seconds?: boolean }) => (
  <time datetime={props.iso}>{`${props.iso.slice(0, props.seconds ? 19 : 16).replace('T', ' ')} UTC`}</time>
);

/** An identifier, in monospace: every id of a kind is as wide as the others. */
export const Id = (props: { value: string }) => <code class="id">{props.value}</code>;

/** Whether a text is one of postcode's ids (`dss_…`, `em_…`), shown as an `Id`. */
export const isId = (text: string) => /^[a-z]{2,3}_[a-z2-7]{20,}$/.test(text);

/** A secret just issued: shown this once, in a field that selects whole. */
export const Secret = (props: { label: string; value: string }) => (
  <label>
    {props.label}
    <input class="secret" readonly value={props.value} />
  </label>
);

/** A row of one-button forms posting to `<base>/<path>`: [path, label, the button's class]. */
export const ActionButtons = (props: { base: string; csrf: string; actions: [string, string, string][] }) => (
  <div class="actions">
    {props.actions.map(([path, label, tone]) => (
      <form class="inline" method="post" action={`${props.base}/${path}`}>
        <Csrf token={props.csrf} />
        <button type="submit" class={tone}>
          {label}
        </button>
      </form>
    ))}
  </div>
);

/**
 * A button rendering the form's unsaved fields at `action` into the frame named `frame` (the page's script presses
 * it as the fields change; without script, the member does).
 */
export const PreviewButton = (props: { action: string; frame: string; label: string }) => (
  <button type="submit" class="secondary" formaction={props.action} formtarget={props.frame} data-preview>
    {props.label}
  </button>
);
