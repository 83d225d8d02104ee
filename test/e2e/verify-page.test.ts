// The hosted email-verification page in a real headless Chromium, against the service started by
// ./global-setup.ts (scripts/start.mjs: wrangler dev + maildev). Send → code from the inbox → wrong code
// (attempts left) → right code (success) → the status route says verified; with and without JavaScript.
import type { Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  codeFromInbox as inboxCode,
  launchChromium,
  mailTextFor,
  sendVerification as send,
  uniqueEmail,
  wrongCodeFor,
} from './browser';

const service = inject('e2e');

type StatusData = { sessionId: string; email: string; status: string; expiresAt: string; verifiedAt?: string };

async function api<T>(path: string): Promise<{ status: number; data: T }> {
  const res = await fetch(service.baseUrl + path, { headers: { Authorization: `Bearer ${service.serverOtpKey}` } });
  const json = (await res.json()) as { data: T };
  return { status: res.status, data: json.data };
}

const sendVerification = (email: string) => send(service, service.serverOtpKey, email);
const codeFromInbox = (email: string) => inboxCode(service, email);

/** The one-click link in the mail maildev received for this (unique) address. */
async function linkFromInbox(email: string): Promise<string> {
  const text = await mailTextFor(service, email);
  const link = /^(http\S+\/verify\?sessionId=\S+&token=\S+)$/m.exec(text)?.[1];
  if (!link) throw new Error(`no link in the mail to ${email}: ${JSON.stringify(text)}`);
  return link;
}

async function verificationStatus(sessionId: string): Promise<StatusData> {
  const { status, data } = await api<StatusData>(`/api/v1/email-verification/${sessionId}`);
  expect(status).toBe(200);
  return data;
}

function expectSecurityHeaders(response: Response | null) {
  expect(response).not.toBeNull();
  const headers = response!.headers();
  const csp = headers['content-security-policy'] ?? '';
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toMatch(/script-src 'nonce-[^']+'/);
  expect(csp).not.toContain('unsafe-inline');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['cache-control']).toContain('no-store');
}

/** Labels, autocomplete and keyboard hints of the form, and a polite live status region. */
async function expectAccessibleForm(page: Page) {
  const email = page.getByLabel('Email address');
  expect(await email.getAttribute('type')).toBe('email');
  expect(await email.getAttribute('autocomplete')).toBe('email');
  const code = page.getByLabel('Verification code');
  expect(await code.getAttribute('autocomplete')).toBe('one-time-code');
  expect(await code.getAttribute('inputmode')).toBe('numeric');
  expect(await page.locator('label[for="code"]').count()).toBe(1);
  const status = page.getByRole('status');
  expect(await status.getAttribute('aria-live')).toBe('polite');
  expect(await status.textContent()).toBe('Enter the code we emailed you.');
}

const isVerifyPost = (r: Response) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/verify';

/** Fills the form and submits it with the Verify button; resolves with the POST /verify response. */
async function submit(page: Page, email: string, code: string): Promise<Response> {
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Verification code').fill(code);
  const [response] = await Promise.all([
    page.waitForResponse(isVerifyPost),
    page.getByRole('button', { name: 'Verify' }).click(),
  ]);
  return response;
}

async function statusText(page: Page, contains: string): Promise<string> {
  const status = page.getByRole('status').filter({ hasText: contains });
  await status.waitFor({ timeout: 10_000 });
  return (await status.textContent()) ?? '';
}

describe('hosted verify page in headless Chromium', () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('with JavaScript: wrong code shows attempts left, right code shows success in place, status is verified', async () => {
    const email = uniqueEmail('js');
    const sent = await sendVerification(email);
    expect(sent.hostedVerifyUrl).toBe(`${service.baseUrl}/verify?sessionId=${sent.sessionId}`);
    const code = await codeFromInbox(email);

    const context = await browser.newContext();
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    const documentRequests: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'document') documentRequests.push(`${request.method()} ${request.url()}`);
    });

    const response = await page.goto(sent.hostedVerifyUrl);
    expect(response?.status()).toBe(200);
    expectSecurityHeaders(response);
    await expectAccessibleForm(page);

    // Wrong code: the page's script posts it with fetch (not a form navigation) and announces the result.
    const wrong = await submit(page, email, wrongCodeFor(code));
    expect(wrong.request().resourceType()).toBe('fetch');
    expect(wrong.request().headers().accept).toContain('application/json');
    expect(await statusText(page, 'attempts left')).toBe('That code is not right. 4 attempts left.');
    expect(await page.getByRole('status').getAttribute('class')).toContain('error');
    expect((await verificationStatus(sent.sessionId)).status).toBe('pending');

    // Right code: success in place, the form is gone.
    const right = await submit(page, email.toUpperCase(), code);
    expect(right.request().resourceType()).toBe('fetch');
    expect(await statusText(page, 'verified')).toBe('Your email address is verified. You can close this page.');
    expect(await page.getByRole('status').getAttribute('class')).toContain('success');
    expect(await page.locator('form').count()).toBe(0);

    // The inline script ran under the CSP: no reload, no navigation, no violation reports.
    expect(page.url()).toBe(sent.hostedVerifyUrl);
    expect(documentRequests).toEqual([`GET ${sent.hostedVerifyUrl}`]);
    expect(consoleErrors).toEqual([]);

    const status = await verificationStatus(sent.sessionId);
    expect(status).toMatchObject({ sessionId: sent.sessionId, email, status: 'verified' });
    expect(status.verifiedAt).toEqual(expect.any(String));

    // Reloading the link after success shows the outcome, not the form.
    await page.reload();
    expect(await statusText(page, 'verified')).toContain('Your email address is verified');
    expect(await page.locator('form').count()).toBe(0);
    await context.close();
  });

  it('the one-click link: opening it verifies nothing, one press on the button does', async () => {
    const email = uniqueEmail('link');
    const sent = await sendVerification(email);
    const link = await linkFromInbox(email);
    expect(link.startsWith(`${sent.hostedVerifyUrl}&token=`)).toBe(true);
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(link);
    expect(response?.status()).toBe(200);
    expectSecurityHeaders(response);
    expect(await statusText(page, 'button')).toBe('Press the button to verify your email address.');
    await page.reload(); // a second GET (a scanner's prefetch) changes nothing either
    expect((await verificationStatus(sent.sessionId)).status).toBe('pending');
    const [press] = await Promise.all([
      page.waitForResponse(isVerifyPost),
      page.getByRole('button', { name: 'Verify my email address' }).click(),
    ]);
    expect(press.request().resourceType()).toBe('fetch');
    expect(await statusText(page, 'verified')).toBe('Your email address is verified. You can close this page.');
    expect(await page.locator('form').count()).toBe(0);
    expect((await verificationStatus(sent.sessionId)).status).toBe('verified');
    await context.close();
  });

  it('without JavaScript: the same through plain form POSTs', async () => {
    const email = uniqueEmail('nojs');
    const sent = await sendVerification(email);
    const code = await codeFromInbox(email);

    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const response = await page.goto(sent.hostedVerifyUrl);
    expect(response?.status()).toBe(200);
    expectSecurityHeaders(response);
    await expectAccessibleForm(page);

    // Wrong code: a real form POST (a document navigation) renders the page again with the result.
    const wrong = await submit(page, email, wrongCodeFor(code));
    expect(wrong.request().resourceType()).toBe('document');
    expect(wrong.request().headers()['content-type']).toContain('application/x-www-form-urlencoded');
    expect(wrong.status()).toBe(200);
    expectSecurityHeaders(wrong);
    await page.waitForLoadState('domcontentloaded');
    expect(await statusText(page, 'attempts left')).toBe('That code is not right. 4 attempts left.');
    expect(await page.getByLabel('Email address').inputValue()).toBe(email);
    expect(await page.getByLabel('Verification code').inputValue()).toBe('');
    expect((await verificationStatus(sent.sessionId)).status).toBe('pending');

    // Right code: success page, no form.
    const right = await submit(page, email, code);
    expect(right.request().resourceType()).toBe('document');
    expectSecurityHeaders(right);
    await page.waitForLoadState('domcontentloaded');
    expect(await statusText(page, 'verified')).toBe('Your email address is verified. You can close this page.');
    expect(await page.locator('form').count()).toBe(0);

    const status = await verificationStatus(sent.sessionId);
    expect(status).toMatchObject({ sessionId: sent.sessionId, email, status: 'verified' });
    await context.close();
  });
});
