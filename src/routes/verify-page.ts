import type { Context } from 'hono';
import { anyone } from '../auth/guards';
import type { AppEnv } from '../env';
import { ApiError } from '../errors';
import { readCapped } from '../middleware/json-body';
import type { OtpBranding } from '../otp/branding';
import { brandingOf } from '../otp/branding';
import { otpStatus, verifyOtp } from '../otp/engine';
import { type Language, languageOf } from '../otp/languages';
import { pageLanguage } from '../otp/page-text';
import { isFinal, logoOrigin, type PageState, pageStateOf, renderVerifyPage, stateMessage } from '../otp/verify-page';
import { verifyPageAnswer, verifyPageForm, verifyPageQuery } from '../schemas/otp';
import { HTML, pageHeaders } from './hosted-page';
import { route, router } from './route';

const MAX_FORM_BYTES = 4096;
function securityHeaders(nonce: string, imageOrigin: string | null): Record<string, string> {
  const images = imageOrigin ? `; img-src ${imageOrigin}` : '';
  return pageHeaders(
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'${images}`,
  );
}

/** The page's language: the session's, else the browser's (Accept-Language), else English. */
const languageFor = (c: Context<AppEnv>, sessionLanguage?: Language) =>
  pageLanguage(sessionLanguage, c.req.header('Accept-Language'));

/** The hosted page in `state` (also the 500 page of these routes, see app.ts). */
export function verifyPage(
  c: Context<AppEnv>,
  sessionId: string,
  email: string,
  state: PageState,
  status = 200,
  language = languageFor(c),
  branding: OtpBranding | null = null,
) {
  const nonce = crypto.randomUUID().replaceAll('-', '');
  const page = renderVerifyPage({ sessionId, email, state, nonce, language, branding });
  return c.html(page, status as 200, {
    ...securityHeaders(nonce, logoOrigin(branding)),
    'Content-Language': language,
    Vary: 'Accept-Language',
  });
}

const show = route({
  method: 'get',
  path: '/verify',
  tag: 'Email verification',
  summary: 'The hosted verify page (HTML)',
  guard: anyone,
  query: verifyPageQuery,
  unknownQuery: 'ignored',
  success: { status: 200, description: 'The verify form, or the state of the session', content: HTML },
  pages: { 404: { description: 'The page for an unknown, used or expired session', content: HTML } },
});

const submit = route({
  method: 'post',
  path: '/verify',
  tag: 'Email verification',
  summary: 'Submit the hosted verify form',
  description: 'Answers the page (HTML), or with `Accept: application/json` what the page script shows.',
  guard: anyone,
  form: {
    mediaType: 'application/x-www-form-urlencoded',
    schema: verifyPageForm,
    example: { sessionId: 'otp_…', email: 'ada@example.com', code: '042917' },
  },
  success: {
    status: 200,
    description: 'The page showing the result',
    content: {
      ...HTML,
      'application/json': {
        schema: verifyPageAnswer,
        example: { state: 'verified', done: true, tone: 'success', message: 'Your email address is verified.' },
      },
    },
  },
  pages: {
    400: {
      description: 'The page asking for what the form lacks (without a session: the expired page)',
      content: HTML,
    },
    500: { description: 'The page saying something failed on our side', content: HTML },
  },
  errors: ['INVALID_INPUT', 'PAYLOAD_TOO_LARGE'],
});

/** What the document requires of the form: `sessionId`, and `email` with `code` or `token` (null: all there). */
function missingField(request: { sessionId: string; token?: string; email?: string; code?: string }): string | null {
  if (!request.sessionId) return 'sessionId: required';
  if (request.token !== undefined) return null;
  if (!request.email) return 'email: required with code (or token instead)';
  if (!request.code) return 'code: required with email (or token instead)';
  return null;
}

/** The hosted verify page (no key: the session id in the link and the code are the credential). */
export const verifyPageRoutes = router()
  .openapi(show, async (c) => {
    const { sessionId = '', token } = c.req.valid('query');
    const status = await otpStatus(c.env, null, 'email_verification', sessionId);
    if (!status) return verifyPage(c, sessionId, '', { kind: 'expired' }, 404);
    const language = languageFor(c, status.language);
    const branding = await brandingOf(c.env, status.accountId);
    // A link's GET only shows the button: mail scanners prefetch links, and a GET must never verify.
    if (status.status === 'pending' && token) {
      return verifyPage(c, sessionId, status.email, { kind: 'form', token }, 200, language, branding);
    }
    const state: PageState = status.status === 'pending' ? { kind: 'form' } : { kind: status.status };
    return verifyPage(c, sessionId, '', state, 200, language, branding);
  })
  .openapi(submit, async (c) => {
    const form = new URLSearchParams(new TextDecoder().decode(await readCapped(c, MAX_FORM_BYTES)));
    const sessionId = form.get('sessionId') ?? '';
    const email = (form.get('email') ?? '').trim();
    const code = (form.get('code') ?? '').trim();
    const token = form.get('token');
    const request = token ? { sessionId, token } : { sessionId, email, code };
    const json = (c.req.header('Accept') ?? '').includes('application/json');
    const missing = missingField(request);
    if (missing && json) throw new ApiError('INVALID_INPUT', missing);
    // Without a session there is nothing to enter a code for; with one, the form asks for what is missing.
    const state: PageState = missing
      ? { kind: sessionId ? 'incomplete' : 'expired' }
      : pageStateOf(await verifyOtp(c.env, { accountId: null, channel: 'email_verification' }, request));
    // The page sends the language it was shown in.
    const shown = form.get('lang');
    const language = shown ? languageOf(shown) : languageFor(c);
    if (json) {
      const { tone, text: message } = stateMessage(state, language);
      return c.json({ state: state.kind, done: isFinal(state), tone, message }, 200, { 'Cache-Control': 'no-store' });
    }
    // The page (no script): in the account's look, read from the session like the GET does.
    const session = sessionId ? await otpStatus(c.env, null, 'email_verification', sessionId) : null;
    const branding = session ? await brandingOf(c.env, session.accountId) : null;
    return verifyPage(c, sessionId, email, state, missing ? 400 : 200, language, branding);
  });
