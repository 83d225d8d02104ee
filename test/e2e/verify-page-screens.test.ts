// The hosted verify page, state by state (pending, wrong code, locked, expired, verified), in English and
// German on a 375-px wide phone viewport, in a branded account's look: each screen compared with the
// screenshot committed under ./screens, and checked for what assistive technology needs (labels in the
// accessibility tree, where the focus is, a polite live region, no sideways scrolling, touch-sized buttons).
// UPDATE_SCREENSHOTS=1 writes the screenshots instead of comparing them (look at them before committing).
import type { BrowserContext, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { codeFromInbox, launchChromium, type SendData, sendVerification, uniqueEmail, wrongCodeFor } from './browser';
import { expectScreenshot } from './screens';

const service = inject('e2e');

const WORDS = {
  en: {
    email: 'Email address',
    code: 'Verification code',
    verify: 'Verify',
    pending: 'Enter the code we emailed you.',
    wrong: 'That code is not right. 4 attempts left.',
    locked: 'Too many wrong codes. This code is locked; request a new one.',
    expired: 'This code has expired or is no longer valid. Request a new one.',
    verified: 'Your email address is verified. You can close this page.',
    help: 'Questions? Write to help@acme.example.',
  },
  de: {
    email: 'E-Mail-Adresse',
    code: 'Bestätigungscode',
    verify: 'Bestätigen',
    pending: 'Geben Sie den Code ein, den wir Ihnen gesendet haben.',
    wrong: 'Der Code ist nicht richtig. Noch 4 Versuche.',
    locked: 'Zu viele falsche Codes. Dieser Code ist gesperrt; fordern Sie einen neuen an.',
    expired: 'Dieser Code ist abgelaufen oder nicht mehr gültig. Fordern Sie einen neuen an.',
    verified: 'Ihre E-Mail-Adresse ist bestätigt. Sie können diese Seite schließen.',
    help: 'Fragen? Schreiben Sie an help@acme.example.',
  },
} as const;
type Language = keyof typeof WORDS;
type State = 'pending' | 'wrong' | 'locked' | 'expired' | 'verified';

/** A 40×40 logo (indigo with a white square), served for the branding's https logo URL. */
function logoPng(): Buffer {
  const png = new PNG({ width: 40, height: 40 });
  for (let y = 0; y < 40; y++) {
    for (let x = 0; x < 40; x++) {
      const inner = x >= 12 && x < 28 && y >= 12 && y < 28;
      png.data.set(inner ? [255, 255, 255, 255] : [79, 70, 229, 255], (y * 40 + x) * 4);
    }
  }
  return PNG.sync.write(png);
}

async function operator<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(service.baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${service.adminToken}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data: T };
  expect(res.ok, JSON.stringify(json)).toBe(true);
  return json.data;
}

/** An account of its own (the demo account stays unbranded for the other tests), with a server key. */
async function brandedAccount(): Promise<string> {
  const account = await operator<{ id: string }>('POST', '/admin/v1/accounts', { name: 'Acme Inc' });
  await operator('PUT', `/admin/v1/accounts/${account.id}/otp-branding`, {
    productName: 'Acme Cloud',
    logoUrl: 'https://logo.example/acme.png',
    accentColor: '#4f46e5',
    supportEmail: 'help@acme.example',
  });
  const key = await operator<{ key: string }>('POST', `/admin/v1/accounts/${account.id}/api-keys`, {
    scopes: ['server_otp'],
  });
  return key.key;
}

async function wrongCodes(key: string, sent: SendData, code: string, times: number) {
  for (let i = 0; i < times; i++) {
    await fetch(`${service.baseUrl}/api/v1/email-verification/verify`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sessionId: sent.sessionId, email: sent.email, code: wrongCodeFor(code) }),
    });
  }
}

/** The screen against its committed screenshot (what was typed is masked: address and code differ per run). */
async function expectScreen(page: Page, name: string) {
  const mask = (await page.locator('#email').count()) > 0 ? [page.locator('#email'), page.locator('#code')] : [];
  const shot = await page.screenshot({ fullPage: true, animations: 'disabled', caret: 'hide', mask });
  expectScreenshot(shot, name);
}

/** What every state needs: the language, the live region's words, where the focus is, and a phone-sized layout. */
async function expectAccessible(page: Page, language: Language, state: State, focused: 'code' | 'status') {
  const words = WORDS[language];
  expect(await page.locator('html').getAttribute('lang')).toBe(language);
  const status = page.getByRole('status');
  await expect.poll(() => status.textContent()).toBe(words[state]);
  expect(await status.getAttribute('aria-live')).toBe('polite');
  await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe(focused);
  // Evaluated in the page (this file is compiled without the DOM's types).
  const layout = (await page.evaluate(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })',
  )) as { scrollWidth: number; innerWidth: number };
  expect(layout.scrollWidth, 'no sideways scrolling').toBeLessThanOrEqual(layout.innerWidth);
  expect(await page.getByRole('img', { name: 'Acme Cloud' }).isVisible()).toBe(true);
  expect(await page.getByRole('link', { name: 'help@acme.example' }).getAttribute('href')).toBe(
    'mailto:help@acme.example',
  );
  expect(await page.locator('footer').textContent()).toBe(words.help);
  const form = state === 'pending' || state === 'wrong';
  expect(await page.locator('form').count()).toBe(form ? 1 : 0);
  if (!form) return;
  // Labels reach the accessibility tree (found by role and accessible name), and the button is touch-sized.
  const email = page.getByRole('textbox', { name: words.email });
  const code = page.getByRole('textbox', { name: words.code });
  expect(await email.isVisible()).toBe(true);
  expect(await code.getAttribute('aria-describedby')).toBe('status');
  expect(await code.getAttribute('aria-invalid')).toBe(state === 'wrong' ? 'true' : null);
  const button = await page.getByRole('button', { name: words.verify }).boundingBox();
  expect(button!.height).toBeGreaterThanOrEqual(44);
}

let browser: Awaited<ReturnType<typeof launchChromium>>;
let key: string;
/** Per language, a session that expires (60 s, the shortest) while the other screens are taken. */
const expiring: Partial<Record<Language, SendData>> = {};

beforeAll(async () => {
  browser = await launchChromium();
  key = await brandedAccount();
  for (const language of Object.keys(WORDS) as Language[]) {
    const res = await fetch(`${service.baseUrl}/api/v1/email-verification/send`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: uniqueEmail('expiring'), expiresInSeconds: 60 }),
    });
    expiring[language] = ((await res.json()) as { data: SendData }).data;
  }
});
afterAll(async () => {
  await browser?.close();
});

describe.each(['en', 'de'] as const)('the hosted page on a 375-px phone, in %s', (language) => {
  let context: BrowserContext;

  beforeAll(async () => {
    // The browser's language picks the page's (the sends name no locale).
    context = await browser.newContext({
      viewport: { width: 375, height: 667 },
      deviceScaleFactor: 1,
      locale: language === 'de' ? 'de-DE' : 'en-US',
      colorScheme: 'light',
      reducedMotion: 'reduce',
    });
    const logo = logoPng();
    await context.route('https://logo.example/**', (route) => route.fulfill({ contentType: 'image/png', body: logo }));
  });
  afterAll(async () => {
    await context?.close();
  });

  it('pending, then a wrong code, then verified (the page script answering in place)', async () => {
    const email = uniqueEmail('screens');
    const sent = await sendVerification(service, key, email);
    const code = await codeFromInbox(service, email);
    const page = await context.newPage();
    await page.goto(sent.hostedVerifyUrl);
    await expectAccessible(page, language, 'pending', 'code');
    await expectScreen(page, `pending.${language}`);

    const words = WORDS[language];
    await page.getByRole('textbox', { name: words.email }).fill(email);
    await page.getByRole('textbox', { name: words.code }).fill(wrongCodeFor(code));
    await page.getByRole('button', { name: words.verify }).click();
    await expectAccessible(page, language, 'wrong', 'code');
    await expectScreen(page, `wrong.${language}`);

    await page.getByRole('textbox', { name: words.code }).fill(code);
    await page.getByRole('button', { name: words.verify }).click();
    await expectAccessible(page, language, 'verified', 'status');
    await expectScreen(page, `verified.${language}`);
    await page.close();
  });

  it('locked after five wrong codes', async () => {
    const email = uniqueEmail('screens-locked');
    const sent = await sendVerification(service, key, email);
    await wrongCodes(key, sent, await codeFromInbox(service, email), 5);
    const page = await context.newPage();
    await page.goto(sent.hostedVerifyUrl);
    await expectAccessible(page, language, 'locked', 'status');
    await expectScreen(page, `locked.${language}`);
    await page.close();
  });

  it('expired', async () => {
    const session = expiring[language]!;
    const wait = Date.parse(session.expiresAt) - Date.now() + 500;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const page = await context.newPage();
    await page.goto(session.hostedVerifyUrl);
    await expectAccessible(page, language, 'expired', 'status');
    await expectScreen(page, `expired.${language}`);
    await page.close();
  }, 90_000);
});
