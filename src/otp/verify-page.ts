// The hosted email-verification page: plain HTML that works without JavaScript (a form POST);
// a small script, allowed by a per-response nonce, submits in place and announces the result.

import { escapeHtml } from '../mail/template';
import type { OtpBranding } from './branding';
import { accentColors, parseLogoUrl } from './branding';
import { helpLine, type Language } from './languages';
import { pageText, wrongCodeText } from './page-text';
import type { VerifyOutcome } from './session';

/**
 * The hosted page's address: from PUBLIC_BASE_URL, never from the Host header. With `token`, the one-click
 * link of a verification mail (the page asks for one button press: a GET never verifies).
 */
export function hostedVerifyUrl(publicBaseUrl: string | null, sessionId: string, token?: string): string {
  if (!publicBaseUrl) throw new Error('Invalid configuration: PUBLIC_BASE_URL is not set (the hosted page needs it)');
  const url = new URL('/verify', publicBaseUrl);
  url.searchParams.set('sessionId', sessionId);
  if (token) url.searchParams.set('token', token);
  return url.toString();
}

export type PageState =
  /** With `token`: opened from the mail's one-click link; one button press verifies (a GET never does). */
  | { kind: 'form'; token?: string }
  | { kind: 'verified' }
  | { kind: 'wrong'; attemptsLeft: number }
  | { kind: 'invalid' }
  /** The form came without the email address or the code (400). */
  | { kind: 'incomplete' }
  | { kind: 'locked' }
  | { kind: 'expired' }
  /** Something failed on our side (500 page): reloading the link starts again. */
  | { kind: 'error' };

/** What the page shows for the engine's verify outcome. */
export function pageStateOf(outcome: VerifyOutcome): PageState {
  switch (outcome.result) {
    case 'verified':
      return { kind: 'verified' };
    case 'wrong':
      return { kind: 'wrong', attemptsLeft: outcome.attemptsLeft };
    case 'malformed':
      return { kind: 'invalid' };
    case 'locked':
    case 'limited':
      return { kind: 'locked' };
    case 'expired':
    case 'not_found':
      return { kind: 'expired' };
  }
}

/** States after which the form is gone: nothing more can be entered for this session. */
export function isFinal(state: PageState): boolean {
  if (state.kind === 'wrong') return state.attemptsLeft === 0;
  return state.kind !== 'form' && state.kind !== 'invalid' && state.kind !== 'incomplete';
}

export function stateMessage(
  state: PageState,
  language: Language = 'en',
): { tone: 'info' | 'success' | 'error'; text: string } {
  const text = pageText(language);
  switch (state.kind) {
    case 'form':
      return { tone: 'info', text: state.token ? text.pressButton : text.enterCode };
    case 'verified':
      return { tone: 'success', text: text.verified };
    case 'wrong':
      return {
        tone: 'error',
        text: state.attemptsLeft > 0 ? wrongCodeText(language, state.attemptsLeft) : text.noAttempts,
      };
    case 'invalid':
      return { tone: 'error', text: text.invalid };
    case 'incomplete':
      return { tone: 'error', text: text.incomplete };
    case 'locked':
      return { tone: 'error', text: text.locked };
    case 'expired':
      return { tone: 'error', text: text.expired };
    case 'error':
      return { tone: 'error', text: text.error };
  }
}

const SCRIPT = `
const form = document.getElementById('verify-form');
const status = document.getElementById('status');
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const button = form.querySelector('button');
  button.disabled = true;
  try {
    const res = await fetch(form.action, {
      method: 'POST',
      headers: { Accept: 'application/json' },
      body: new URLSearchParams(new FormData(form)),
    });
    const result = await res.json();
    if (typeof result.message !== 'string') throw new Error('unexpected reply');
    status.textContent = result.message;
    status.className = 'status ' + result.tone;
    const code = document.getElementById('code');
    if (result.done) {
      form.remove();
      status.focus();
    } else if (code) {
      code.setAttribute('aria-invalid', 'true');
      code.select();
      code.focus();
    }
  } catch {
    form.submit();
  } finally {
    button.disabled = false;
  }
});`;

/** The one-click form: the session and the link's token, submitted by one button press. */
function linkForm(sessionId: string, token: string, email: string, language: Language): string {
  const text = pageText(language);
  const codeUrl = `/verify?sessionId=${encodeURIComponent(sessionId)}`;
  return `<form id="verify-form" method="post" action="/verify">
  <input type="hidden" name="sessionId" value="${escapeHtml(sessionId)}">
  <input type="hidden" name="token" value="${escapeHtml(token)}">
  <input type="hidden" name="lang" value="${language}">
  ${email ? `<p>${escapeHtml(email)}</p>` : ''}
  <button type="submit" autofocus>${escapeHtml(text.verifyLink)}</button>
</form>
<p><a href="${escapeHtml(codeUrl)}">${escapeHtml(text.codeInstead)}</a></p>`;
}

/** The logo, parsed: the page shows it and its CSP names its origin only when it has the documented form. */
const logoOf = (branding: OtpBranding | null | undefined) =>
  branding?.logoUrl ? parseLogoUrl(branding.logoUrl) : null;

/** The account's look: logo and product name above the title, the accent on the button, the support line. */
function brandParts(branding: OtpBranding | null | undefined, language: Language) {
  const colors = branding?.accentColor ? accentColors(branding.accentColor) : null;
  const logoUrl = logoOf(branding);
  const logo = logoUrl
    ? `<img class="logo" src="${escapeHtml(logoUrl.href)}" alt="${escapeHtml(branding?.productName ?? '')}" height="40">`
    : '';
  const name = branding?.productName ? `<p class="product">${escapeHtml(branding.productName)}</p>` : '';
  const support = branding?.supportEmail;
  const help = support
    ? `<footer><p>${escapeHtml(helpLine(language, support)).replace(escapeHtml(support), `<a href="mailto:${escapeHtml(support)}">${escapeHtml(support)}</a>`)}</p></footer>`
    : '';
  const style = colors
    ? `button{background:${colors.accent};color:${colors.onAccent};border:0;border-radius:.375rem}
:focus-visible{outline:3px solid ${colors.accent};outline-offset:2px}`
    : ':focus-visible{outline:3px solid #1f4fd1;outline-offset:2px}';
  return { header: logo || name ? `<header>${logo}${name}</header>` : '', help, style };
}

/** The image origin the page's Content-Security-Policy allows: the logo's, else none. */
export const logoOrigin = (branding: OtpBranding | null | undefined) => logoOf(branding)?.origin ?? null;

export function renderVerifyPage(options: {
  sessionId: string;
  email: string;
  state: PageState;
  nonce: string;
  language?: Language;
  branding?: OtpBranding | null;
}) {
  const language = options.language ?? 'en';
  const brand = brandParts(options.branding, language);
  const wrong = options.state.kind === 'wrong' || options.state.kind === 'invalid';
  const words = pageText(language);
  const { tone, text } = stateMessage(options.state, language);
  const token = options.state.kind === 'form' ? options.state.token : undefined;
  const form = isFinal(options.state)
    ? ''
    : token
      ? `${linkForm(options.sessionId, token, options.email, language)}\n<script nonce="${options.nonce}">${SCRIPT}</script>`
      : `<form id="verify-form" method="post" action="/verify" novalidate>
  <input type="hidden" name="sessionId" value="${escapeHtml(options.sessionId)}">
  <input type="hidden" name="lang" value="${language}">
  <label for="email">${escapeHtml(words.email)}</label>
  <input id="email" name="email" type="email" autocomplete="email" maxlength="254" required value="${escapeHtml(options.email)}">
  <label for="code">${escapeHtml(words.code)}</label>
  <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]*" maxlength="10" required autofocus aria-describedby="status"${wrong ? ' aria-invalid="true"' : ''}>
  <button type="submit">${escapeHtml(words.verify)}</button>
</form>
<script nonce="${options.nonce}">${SCRIPT}</script>`;
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(words.title)}</title>
<style nonce="${options.nonce}">
body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
label{display:block;margin-top:1rem;font-weight:600}
input{display:block;width:100%;box-sizing:border-box;font-size:1.1rem;padding:.5rem;margin-top:.25rem}
#code{letter-spacing:.3rem;font-family:monospace}
button{margin-top:1.25rem;font-size:1.1rem;padding:.5rem 1.5rem;min-height:2.75rem}
.status{padding:.75rem;border-radius:.25rem;background:#eef3fb}
.status.success{background:#e6f4ea;color:#0b5b21}.status.error{background:#fdecea;color:#8a1c12}
header{display:flex;align-items:center;gap:.75rem}.product{font-weight:700;font-size:1.2rem}
footer{margin-top:2rem;font-size:.95rem;color:#444}
${brand.style}
</style>
</head>
<body>
${brand.header}
<main>
<h1>${escapeHtml(words.title)}</h1>
<p id="status" class="status ${tone}" role="status" aria-live="polite" tabindex="-1"${isFinal(options.state) ? ' autofocus' : ''}>${escapeHtml(text)}</p>
${form}
</main>
${brand.help}
</body>
</html>`;
}
