// The <postcode-otp> element (browser/postcode-otp.js, served at /sdk/v1/otp.js) on a page of another origin, in
// Chromium against the service as `npm start` runs it: a code sent, read from the local inbox and verified (typed,
// keyboard only, pasted), a wrong code and a 429's wait, inside a form, behind a (fake) Turnstile widget, axe-core in
// light and dark on a 375-px phone, and the manifest's hashed, integrity-checked copy of the script.
// UPDATE_SCREENSHOTS=1 also writes the element's pictures for the docs (docs/images/otp-element-*.png; not compared).
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { codeFromInbox, launchChromium, uniqueEmail, wrongCodeFor } from './browser';
import { api, seriousViolations } from './dashboard-browser';
import {
  elementMarkup,
  fakeTurnstile,
  focusedPart,
  hostState,
  openElement,
  otpEvent,
  otpEvents,
  type PageServer,
  part,
  startPageServer,
  statusText,
  TURNSTILE_ANSWER,
} from './otp-element-page';
import { succeeded } from './shared-service';

const service = inject('e2e');
const DOCS_IMAGES = join(import.meta.dirname, '../../docs/images');
const TURNSTILE_SITE_KEY = '1x00000000000000000000AA';
const TURNSTILE_PASSES = { siteKey: TURNSTILE_SITE_KEY, secret: '1x0000000000000000000000000000000AA' };
const TURNSTILE_FAILS = { siteKey: TURNSTILE_SITE_KEY, secret: '2x0000000000000000000000000000000AA' };

let browser: Browser;
let site: PageServer;
/** An account of this file's own (the demo account's audit log is another test's), and its server key. */
let account: { id: string; serverKey: string };

beforeAll(async () => {
  browser = await launchChromium();
  site = await startPageServer();
  const { id } = await api<{ id: string }>('POST', '/admin/v1/accounts', { name: 'postcode-otp element' });
  const { key } = await api<{ key: string }>('POST', `/admin/v1/accounts/${id}/api-keys`, { scopes: ['server_otp'] });
  account = { id, serverKey: key };
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

/** A public OTP token (in this file's account unless told), with the Turnstile setting when given. */
async function publicToken(turnstile?: { siteKey: string; secret: string }, accountId = account.id) {
  const body = turnstile ? { turnstile } : {};
  return (await api<{ token: string }>('POST', `/admin/v1/accounts/${accountId}/otp-tokens`, body)).token;
}

/** A page of a fresh context showing the element (with `token`) and nothing else. */
async function elementPage(token: string, options: Parameters<Browser['newContext']>[0] = {}) {
  const context = await browser.newContext(options);
  return openElement(context, site.page(elementMarkup(service.baseUrl, { token })));
}

/** Types the address, presses Enter: the `sent` event's detail once focus is in the code input. */
async function sendTo(page: Page, email: string) {
  await part(page, 'email-input').fill(email);
  await part(page, 'email-input').press('Enter');
  const sent = await otpEvent(page, 'sent', (await otpEvents(page, 'sent')).length + 1);
  await expect.poll(() => focusedPart(page)).toBe('code-input');
  return sent.detail as { sessionId: string; email: string };
}

/** The parts of the email step and what assistive technology needs of them (evaluated in the page). */
const EMAIL_STEP = `(() => {
  const host = document.querySelector('postcode-otp');
  const input = host.querySelector('[data-part="email-input"]');
  const status = host.querySelector('[data-part="status"]');
  return {
    shadowRoot: host.shadowRoot !== null,
    state: host.dataset.state,
    type: input.type,
    autocomplete: input.getAttribute('autocomplete'),
    labelled: [...input.labels].some((label) => label.textContent.trim() !== ''),
    describedByStatus: status.id !== '' && (input.getAttribute('aria-describedby') ?? '').split(/\\s+/).includes(status.id),
    status: [status.getAttribute('role'), status.getAttribute('aria-live')],
    buttonTypes: [...new Set([...host.querySelectorAll('button')].map((button) => button.getAttribute('type')))],
  };
})()`;

const CODE_STEP = `(() => {
  const host = document.querySelector('postcode-otp');
  const input = host.querySelector('[data-part="code-input"]');
  const status = host.querySelector('[data-part="status"]');
  return {
    state: host.dataset.state,
    autocomplete: input.getAttribute('autocomplete'),
    inputmode: input.getAttribute('inputmode'),
    labelled: [...input.labels].some((label) => label.textContent.trim() !== ''),
    describedByStatus: status.id !== '' && (input.getAttribute('aria-describedby') ?? '').split(/\\s+/).includes(status.id),
    buttonTypes: [...new Set([...host.querySelectorAll('button')].map((button) => button.getAttribute('type')))],
  };
})()`;

const ACCESSIBLE_CODE_STEP = {
  state: 'code',
  autocomplete: 'one-time-code',
  inputmode: 'numeric',
  labelled: true,
  describedByStatus: true,
  buttonTypes: ['button'],
};

describe('<postcode-otp> on a page of another origin', () => {
  it('sends, takes the code from the inbox and verifies; the server key confirms the session', async () => {
    const page = await elementPage(await publicToken());
    expect(await page.evaluate(EMAIL_STEP)).toEqual({
      shadowRoot: false,
      state: 'email',
      type: 'email',
      autocomplete: 'email',
      labelled: true,
      describedByStatus: true,
      status: ['status', 'polite'],
      buttonTypes: ['button'],
    });
    expect(await part(page, 'code-step').isVisible(), 'code step before a send').toBe(false);
    expect(await part(page, 'challenge').isVisible(), 'no Turnstile for this token').toBe(false);

    const email = uniqueEmail('otp-element');
    await part(page, 'email-input').pressSequentially(email);
    await part(page, 'email-input').press('Enter');
    const sent = await otpEvent(page, 'sent');
    expect(sent).toEqual({
      type: 'sent',
      detail: { sessionId: expect.any(String), email },
      bubbles: true,
      composed: true,
    });
    await expect.poll(() => focusedPart(page)).toBe('code-input');
    expect(await page.evaluate(CODE_STEP)).toEqual(ACCESSIBLE_CODE_STEP);
    expect(await part(page, 'code-step').isVisible()).toBe(true);
    expect(await part(page, 'sent-to').textContent()).toContain(email);

    await part(page, 'code-input').pressSequentially(await codeFromInbox(service, email));
    await expect.poll(() => hostState(page)).toBe('verified');
    const { sessionId } = sent.detail as { sessionId: string };
    expect(await otpEvent(page, 'verified')).toEqual({
      type: 'verified',
      detail: { sessionId, email },
      bubbles: true,
      composed: true,
    });
    expect(await part(page, 'done').isVisible()).toBe(true);
    const session = await succeeded<{ status: string; email: string }>(
      'GET',
      `/api/v1/instant-otp/sessions/${sessionId}`,
      account.serverKey,
    );
    expect(session).toMatchObject({ sessionId, status: 'verified', email });
    expect(await otpEvents(page, 'error')).toEqual([]);
    await page.context().close();
  });

  it('works with the keyboard alone (Tab, typing, Enter)', async () => {
    const page = await elementPage(await publicToken());
    await page.keyboard.press('Tab');
    expect(await focusedPart(page)).toBe('email-input');
    const email = uniqueEmail('otp-keyboard');
    await page.keyboard.type(email);
    await page.keyboard.press('Enter');
    await otpEvent(page, 'sent');
    await expect.poll(() => focusedPart(page)).toBe('code-input');

    // Enter verifies what was typed so far (one digit short: refused, the input keeps the focus) ...
    const code = await codeFromInbox(service, email);
    const before = await statusText(page);
    await page.keyboard.type(code.slice(0, -1));
    await page.keyboard.press('Enter');
    await expect.poll(() => statusText(page)).not.toBe(before);
    expect(await statusText(page)).not.toBe('');
    expect(await hostState(page)).toBe('code');
    expect(await focusedPart(page)).toBe('code-input');
    // ... and the last digit completes the code, which verifies by itself.
    await page.keyboard.type(code.slice(-1));
    await expect.poll(() => hostState(page)).toBe('verified');
    await page.context().close();
  });

  it('shows a wrong code and a 429 wait, then verifies a pasted code in full-width digits', async () => {
    const page = await elementPage(await publicToken());
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.origin });
    const email = uniqueEmail('otp-paste');
    const { sessionId } = await sendTo(page, email);
    const code = await codeFromInbox(service, email);

    const before = await statusText(page);
    await part(page, 'code-input').fill(wrongCodeFor(code));
    expect((await otpEvent(page, 'error')).detail).toMatchObject({ code: 'INVALID_CODE', message: expect.any(String) });
    await expect.poll(() => statusText(page)).not.toBe(before);
    expect(await statusText(page)).not.toBe('');
    expect(await hostState(page)).toBe('code');
    expect(await focusedPart(page)).toBe('code-input');

    // The second code goes out; the third waits (RATE_OTP_BACKOFF_SECONDS: 30 after two unverified codes).
    await part(page, 'resend').click();
    expect((await otpEvent(page, 'sent', 2)).detail).toEqual({ sessionId, email });
    const waiting = await statusText(page);
    await part(page, 'resend').click();
    const limited = await otpEvent(page, 'error', 2);
    expect(limited.detail).toMatchObject({ code: 'OTP_RATE_LIMITED', message: expect.any(String) });
    const wait = limited.detail.retryAfterSeconds as number;
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(30);
    await expect.poll(() => part(page, 'resend').isDisabled()).toBe(true);
    const seconds = Number(/\d+/.exec((await part(page, 'resend').textContent()) ?? '')?.[0]);
    expect(seconds, 'seconds left on the resend button').toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(wait);
    expect(await statusText(page), 'the status tells of the wait').not.toBe(waiting);

    // A real paste (a trusted paste event, then the input): the first code is still valid.
    await part(page, 'code-input').fill('');
    const fullWidth = [...code].map((digit) => String.fromCodePoint(0xff10 + Number(digit))).join('');
    await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(fullWidth)})`);
    await part(page, 'code-input').focus();
    await page.keyboard.press('ControlOrMeta+V');
    await expect.poll(() => hostState(page)).toBe('verified');
    expect((await otpEvent(page, 'verified')).detail).toEqual({ sessionId, email });
    await page.context().close();
  });

  it('in a form: invalid until verified, then submits the session id under its name', async () => {
    const context = await browser.newContext();
    const token = await publicToken();
    const form = `<form id="signup">
${elementMarkup(service.baseUrl, { token, name: 'otp_session' })}
<button type="submit">Create account</button>
</form>
<script>
  window.submitted = [];
  document.getElementById('signup').addEventListener('submit', (event) => {
    event.preventDefault();
    window.submitted.push(Object.fromEntries(new FormData(event.target)));
  });
</script>`;
    const page = await openElement(context, site.page(form));
    const FORM = "document.getElementById('signup')";
    expect(await page.evaluate(`${FORM}.checkValidity()`)).toBe(false);
    await page.evaluate(`${FORM}.requestSubmit()`);
    expect(await page.evaluate('window.submitted')).toEqual([]);

    const email = uniqueEmail('otp-form');
    const { sessionId } = await sendTo(page, email);
    expect(await page.evaluate('window.submitted'), 'Enter in the email input sends, not submits').toEqual([]);
    const code = await codeFromInbox(service, email);
    await part(page, 'code-input').fill(`${code.slice(0, 3)} ${code.slice(3)}`);
    await expect.poll(() => hostState(page)).toBe('verified');

    expect(await page.evaluate(`${FORM}.checkValidity()`)).toBe(true);
    expect(await page.evaluate(`new FormData(${FORM}).get('otp_session')`)).toBe(sessionId);
    await page.evaluate(`${FORM}.requestSubmit()`);
    const submitted = (await page.evaluate('window.submitted')) as Record<string, string>[];
    expect(submitted).toHaveLength(1);
    expect(submitted[0]).toMatchObject({ otp_session: sessionId });
    await context.close();
  });

  it("sends Turnstile's answer for a token that requires it; a refused answer shows CHALLENGE_FAILED", async () => {
    const context = await browser.newContext();
    const requested = await fakeTurnstile(context);
    const page = await openElement(
      context,
      site.page(elementMarkup(service.baseUrl, { token: await publicToken(TURNSTILE_PASSES) })),
    );
    await expect
      .poll(() => page.evaluate('window.turnstileCalls?.renders'))
      .toEqual([
        {
          sitekey: TURNSTILE_SITE_KEY,
          theme: 'auto',
          part: 'challenge',
          callbacks: ['callback', 'error-callback', 'expired-callback'],
        },
      ]);
    expect(requested).toEqual(['https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit']);
    const sends: unknown[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/v1/instant-otp/send')) sends.push(request.postDataJSON());
    });
    const email = uniqueEmail('otp-turnstile');
    const { sessionId } = await sendTo(page, email);
    expect(sends).toEqual([expect.objectContaining({ email, turnstileToken: TURNSTILE_ANSWER })]);
    const code = await codeFromInbox(service, email);
    await expect.poll(() => page.evaluate('window.turnstileCalls.resets.length')).toBeGreaterThanOrEqual(1);
    await part(page, 'code-input').fill(`${code.slice(0, 3)}-${code.slice(3)}`);
    await expect.poll(() => hostState(page)).toBe('verified');
    expect((await otpEvent(page, 'verified')).detail).toEqual({ sessionId, email });

    const refused = await openElement(
      context,
      site.page(elementMarkup(service.baseUrl, { token: await publicToken(TURNSTILE_FAILS) })),
    );
    await expect.poll(() => refused.evaluate('window.turnstileCalls?.renders.length')).toBe(1);
    const before = await statusText(refused);
    await part(refused, 'email-input').fill(uniqueEmail('otp-turnstile-refused'));
    await part(refused, 'email-input').press('Enter');
    expect((await otpEvent(refused, 'error')).detail).toMatchObject({ code: 'CHALLENGE_FAILED' });
    await expect.poll(() => statusText(refused)).not.toBe(before);
    expect(await statusText(refused)).not.toBe('');
    expect(await hostState(refused)).toBe('email');
    expect(await otpEvents(refused, 'sent')).toEqual([]);
    await context.close();
  });

  it('speaks German with lang="de"', async () => {
    const context = await browser.newContext();
    const token = await publicToken();
    const page = await openElement(context, site.page(elementMarkup(service.baseUrl, { token, lang: 'de' })));
    expect((await part(page, 'send').textContent())?.trim()).toBe('Code senden');
    expect(await page.getByRole('textbox', { name: 'E-Mail-Adresse', exact: true }).isVisible()).toBe(true);
    await context.close();
  });
});

describe('<postcode-otp> on a 375-px phone', () => {
  let accountId: string;

  beforeAll(async () => {
    // An account of its own: the pictures show the same address on every run, within the recipient's limits.
    accountId = (await api<{ id: string }>('POST', '/admin/v1/accounts', { name: 'Acme OTP element' })).id;
  });

  /** The element's picture for the docs, with a margin (UPDATE_SCREENSHOTS=1 only). */
  async function docsPicture(page: Page, step: 'email' | 'code', scheme: string) {
    if (process.env.UPDATE_SCREENSHOTS !== '1') return;
    const box = (await page.locator('postcode-otp').boundingBox())!;
    const x = Math.max(0, box.x - 8);
    const y = Math.max(0, box.y - 8);
    const clip = { x, y, width: Math.min(375 - x, box.width + 16), height: box.height + 16 };
    const shot = await page.screenshot({ clip, animations: 'disabled', caret: 'hide' });
    mkdirSync(DOCS_IMAGES, { recursive: true });
    writeFileSync(join(DOCS_IMAGES, `otp-element-${step}-${scheme}.png`), shot);
  }

  const layoutWidth = (page: Page) => page.evaluate('document.documentElement.scrollWidth') as Promise<number>;

  it.each(['light', 'dark'] as const)(
    'has no serious or critical axe-core violation, no sideways scroll (%s)',
    async (scheme) => {
      const page = await elementPage(await publicToken(undefined, accountId), {
        viewport: { width: 375, height: 740 },
        deviceScaleFactor: 2,
        colorScheme: scheme,
        reducedMotion: 'reduce',
      });
      expect(await seriousViolations(page), `email step, ${scheme}`).toEqual([]);
      expect(await layoutWidth(page)).toBeLessThanOrEqual(375);
      await part(page, 'email-input').fill('ada@example.com');
      await docsPicture(page, 'email', scheme);

      await sendTo(page, 'ada@example.com');
      expect(await seriousViolations(page), `code step, ${scheme}`).toEqual([]);
      expect(await layoutWidth(page)).toBeLessThanOrEqual(375);
      await docsPicture(page, 'code', scheme);
      await page.context().close();
    },
  );
});

describe('the manifest of /sdk/v1', () => {
  it('names a hashed copy of otp.js: the same bytes, cached for a year, and its integrity', async () => {
    const res = await fetch(`${service.baseUrl}/sdk/v1/manifest.json`);
    expect(res.status).toBe(200);
    const manifest = (await res.json()) as {
      files: Record<string, { path: string; integrity: string; bytes: number; gzipBytes: number }>;
    };
    const entry = manifest.files['otp.js']!;
    expect(entry.path).toMatch(/^\/sdk\/v1\/otp\.[0-9a-f]{16}\.js$/);

    const plain = await fetch(`${service.baseUrl}/sdk/v1/otp.js`);
    const hashed = await fetch(service.baseUrl + entry.path);
    expect([plain.status, hashed.status]).toEqual([200, 200]);
    expect(plain.headers.get('access-control-allow-origin')).toBe('*');
    expect(plain.headers.get('content-type')).toMatch(/javascript/);
    expect(hashed.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const bytes = Buffer.from(await plain.arrayBuffer());
    expect(Buffer.from(await hashed.arrayBuffer()).equals(bytes), 'the hashed copy serves the same bytes').toBe(true);
    expect(entry.integrity).toBe(`sha384-${createHash('sha384').update(bytes).digest('base64')}`);
    expect(entry.bytes).toBe(bytes.length);
    expect(entry.gzipBytes).toBeGreaterThan(0);
    expect(entry.gzipBytes).toBeLessThan(entry.bytes);

    const context = await browser.newContext();
    const token = await publicToken();
    const src = service.baseUrl + entry.path;
    const page = await openElement(
      context,
      site.page(elementMarkup(service.baseUrl, { token, src, integrity: entry.integrity })),
    );
    expect(await page.evaluate("customElements.get('postcode-otp') !== undefined")).toBe(true);
    // The check is real: a script whose hash differs is not run.
    const wrong = await context.newPage();
    const integrity = `sha384-${createHash('sha384').update('something else').digest('base64')}`;
    await wrong.goto(site.page(elementMarkup(service.baseUrl, { token, src, integrity })), { waitUntil: 'load' });
    expect(await wrong.evaluate("customElements.get('postcode-otp') === undefined")).toBe(true);
    await context.close();
  });
});
