// Branding: the look of the account's OTP mail and hosted verify page, with a preview of the page in each of its
// languages that follows what is typed (the unsaved fields, rendered by the page's own code, in a sandbox).
import type { Context } from 'hono';
import { z } from 'zod';
import { can } from '../../dashboard/roles';
import { Csrf, Notice, PreviewButton } from '../../dashboard/views/layout';
import { SCRIPT_PATH } from '../../dashboard/views/script';
import { setBranding } from '../../otp/branding';
import { LANGUAGES, type Language } from '../../otp/languages';
import { logoOrigin, renderVerifyPage } from '../../otp/verify-page';
import { otpBrandingBody } from '../../schemas/admin';
import { accountStore } from '../../store/account/client';
import { recordAudit } from '../../store/control/audit-log';
import { invalidInput } from '../../validation';
import { act, type PageDeclaration, type PageEnv, render } from './page';

const FIELDS = ['productName', 'logoUrl', 'accentColor', 'supportEmail'] as const;

/** The form's fields as the operator API's body: an empty field is none (cleared). */
function brandingOfForm(form: URLSearchParams) {
  const body = otpBrandingBody.safeParse(Object.fromEntries(FIELDS.map((name) => [name, form.get(name) || null])));
  if (!body.success) throw invalidInput(body.error);
  return body.data;
}

const languageForm = z.object({ language: z.enum(LANGUAGES).catch('en') });

async function brandingPage(c: Context<PageEnv>, notice?: unknown) {
  const { accountId, role } = c.var.signedIn;
  const branding = await accountStore(c.env, accountId).findOtpBranding(accountId);
  const writable = can(role, 'write');
  const done = c.req.query('done') === 'saved' ? 'Branding saved: new mail and pages use it.' : null;
  const field = (name: (typeof FIELDS)[number], label: string, type = 'text') => (
    <label>
      {label}
      <input type={type} name={name} value={branding?.[name] ?? ''} readonly={!writable} />
    </label>
  );
  return render(
    c,
    'Branding',
    <>
      <h1>Branding</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <p class="muted">
        The look of one-time code mail and of the hosted verify page. An empty field uses the default.
      </p>
      <form class="stack" method="post" action="/dashboard/branding" data-live-preview>
        <Csrf token={c.var.frame.csrf} />
        <div class="editor">
          <div class="stack">
            {field('productName', 'Product name')}
            {field('logoUrl', 'Logo URL (https)', 'url')}
            {field('accentColor', 'Accent colour (#rrggbb)')}
            {field('supportEmail', 'Support address', 'email')}
            <label>
              Preview in
              <select name="language">
                {LANGUAGES.map((language) => (
                  <option value={language}>{language}</option>
                ))}
              </select>
            </label>
          </div>
          <iframe
            tabindex={-1}
            class="preview"
            name="preview-page"
            title="Preview of the hosted verify page"
            sandbox=""
            src="about:blank"
          />
        </div>
        <div class="actions">
          {writable ? <button type="submit">Save</button> : null}
          <PreviewButton action="/dashboard/branding/preview" frame="preview-page" label="Preview" />
        </div>
      </form>
      <script src={SCRIPT_PATH} defer />
    </>,
  );
}

/** The hosted page as it would show a code's form with the unsaved branding, in a sandbox that runs no script. */
async function preview(c: Context<PageEnv>) {
  const fields = brandingOfForm(c.var.form);
  const { language } = languageForm.parse({ language: c.var.form.get('language') });
  const branding = {
    accountId: c.var.signedIn.accountId,
    accountName: c.var.signedIn.accountName,
    updatedAt: null,
    productName: fields.productName ?? null,
    logoUrl: fields.logoUrl ?? null,
    accentColor: fields.accentColor ?? null,
    supportEmail: fields.supportEmail ?? null,
  };
  const nonce = crypto.randomUUID().replaceAll('-', '');
  const page = renderVerifyPage({
    sessionId: 'otp_preview',
    email: 'ada@example.com',
    state: { kind: 'form' },
    nonce,
    language: language as Language,
    branding,
  });
  const images = logoOrigin(branding);
  return c.html(page, 200, {
    'Content-Security-Policy': `sandbox; default-src 'none'; style-src 'nonce-${nonce}'${images ? `; img-src ${images}` : ''}; frame-ancestors 'self'`,
    'X-Frame-Options': 'SAMEORIGIN',
    'Content-Language': language,
  });
}

export const brandingPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/branding', access: 'read', handler: (c) => brandingPage(c) },
  { method: 'post', path: '/dashboard/branding/preview', access: 'read', handler: preview },
  {
    method: 'post',
    path: '/dashboard/branding',
    access: 'write',
    handler: (c) =>
      act(
        c,
        async () => {
          const fields = brandingOfForm(c.var.form);
          await setBranding(c.env, c.var.signedIn.accountId, fields);
          await recordAudit(c.env.DB, c.var.signedIn.accountId, {
            actor: c.var.signedIn.email,
            action: 'branding.changed',
            detail: fields,
          });
        },
        '/dashboard/branding?done=saved',
        (notice) => brandingPage(c, notice),
      ),
  },
];
