// Every dashboard page as a member sees it, in an account of its own whose content is the same on every run: axe-core
// finds no serious or critical violation, in light and dark; and screenshots at 1280×800 and 375×812, light and
// dark, are compared with those under ./screens/dashboard (UPDATE_SCREENSHOTS=1 writes them; look before
// committing). What changes from run to run is masked: times, ids, the browser's name, the chart's dates.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from './browser';
import { api, seriousViolations, signIn } from './dashboard-browser';
import { expectScreenshot } from './screens';

const service = inject('e2e');
const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 375, height: 812 } } as const;
const SCHEMES = ['light', 'dark'] as const;
const OWNER = 'ada@screens.example';

let browser: Browser;
let state: Awaited<ReturnType<import('playwright-core').BrowserContext['storageState']>>;
/** The signed-in pages, by screenshot name; the email's page is the scheduled one, the template's is its editor. */
const pages: Record<string, string> = {
  overview: '/dashboard/overview',
  emails: '/dashboard/emails',
  suppressions: '/dashboard/suppressions',
  keys: '/dashboard/keys',
  members: '/dashboard/members',
  sessions: '/dashboard/sessions',
  'audit-log': '/dashboard/audit-log',
};

/** Waits for a sent email to be SENT, so that every run shows the same statuses. */
async function sentEmail(key: string, body: Record<string, unknown>) {
  const { id } = await api<{ id: string }>('POST', '/api/v1/emails', body, key);
  const wanted = body.scheduledAt ? 'SCHEDULED' : 'SENT';
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
    const { status } = await api<{ status: string }>('GET', `/api/v1/emails/${id}`, undefined, key);
    if (status === wanted) return id;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`email ${id} did not become ${wanted}`);
}

beforeAll(async () => {
  browser = await launchChromium();
  const account = await api<{ id: string }>('POST', '/admin/v1/accounts', { name: 'Acme Screens' });
  await api('POST', `/admin/v1/accounts/${account.id}/members`, { email: OWNER, role: 'owner' });
  const { key } = await api<{ key: string }>('POST', `/admin/v1/accounts/${account.id}/api-keys`, {
    scopes: ['mail_api'],
    name: 'screens',
  });
  const welcome = await sentEmail(key, {
    to: 'grace@customer.example',
    subject: 'Welcome to Acme',
    text: 'Hello Grace',
  });
  await sentEmail(key, {
    to: ['linus@customer.example', 'margaret@customer.example'],
    subject: 'Your invoice',
    html: '<h1 style="font-family:sans-serif">Invoice</h1><p>Thank you.</p>',
    tags: [{ name: 'kind', value: 'invoice' }],
  });
  const scheduled = await sentEmail(key, {
    to: 'barbara@customer.example',
    subject: 'Reminder for tomorrow',
    text: 'See you tomorrow.',
    scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
  });
  pages.email = `/dashboard/emails/${scheduled}`;
  await api('POST', '/api/v1/suppressions', { email: 'bounced@customer.example', note: 'mailbox full' }, key);
  const template = await api<{ id: string }>(
    'POST',
    '/api/v1/templates',
    {
      name: 'welcome',
      subject: 'Welcome to Acme, {{name}}',
      htmlBody:
        '<h1 style="font-family:sans-serif;color:#4338ca">Welcome, {{name}}</h1><p>Your workspace is ready.</p>',
      textBody: 'Welcome, {{name}}. Your workspace is ready.',
    },
    key,
  );
  const hook = await api<{ id: string }>(
    'POST',
    '/api/v1/webhooks',
    { url: 'https://hooks.acme.example/postcode', events: ['domain.verified'], description: 'Domain changes' },
    key,
  );
  const domain = await api<{ id: string }>('POST', '/api/v1/domains', { name: 'mail.acme-screens.example' }, key);
  pages.domains = '/dashboard/domains';
  pages.domain = `/dashboard/domains/${domain.id}`;
  pages.branding = '/dashboard/branding';
  await api('PUT', `/admin/v1/accounts/${account.id}/otp-branding`, { productName: 'Acme', accentColor: '#4338ca' });
  pages.webhooks = '/dashboard/webhooks';
  pages.webhook = `/dashboard/webhooks/${hook.id}`;
  // Grace answers the welcome mail at the account's receiving address, as Email Routing would hand it over.
  const { domains } = await api<{ domains: { domain: string }[] }>('GET', '/api/v1/inbound/addresses', undefined, key);
  const support = `support@${domains[0]!.domain}`;
  await api('POST', '/api/v1/inbound/routes', { pattern: support, action: 'store' }, key);
  const { messageId } = await api<{ messageId: string }>('GET', `/api/v1/emails/${welcome}`, undefined, key);
  const reply = [
    'From: Grace Hopper <grace@customer.example>',
    `To: ${support}`,
    'Subject: Re: Welcome to Acme',
    'Date: Thu, 26 Nov 2026 10:00:00 +0000',
    'Message-ID: <reply-1@customer.example>',
    `In-Reply-To: ${messageId}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Thanks! Where do I find the invoices?',
    '',
  ].join('\r\n');
  const handed = await fetch(
    `${service.baseUrl}/cdn-cgi/handler/email?${new URLSearchParams({ from: 'grace@customer.example', to: support })}`,
    { method: 'POST', body: reply },
  );
  expect(handed.ok).toBe(true);
  const received = await api<{ messages: { id: string }[] }>('GET', '/api/v1/inbound', undefined, key);
  pages.inbound = '/dashboard/inbound';
  pages['inbound-message'] = `/dashboard/inbound/${received.messages[0]!.id}`;
  pages.templates = '/dashboard/templates';
  pages.template = `/dashboard/templates/${template.id}`;
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, OWNER);
  await page.goto(`${service.baseUrl}/dashboard/members`);
  await page.getByLabel('Email address').fill('dev@screens.example');
  await page.getByRole('button', { name: 'Add member' }).click();
  await page.getByRole('status').filter({ hasText: 'Member added' }).waitFor();
  state = await context.storageState();
  await context.close();
});
afterAll(async () => {
  await browser?.close();
});

/** Masks what differs per run (times, ids, DKIM records, the browser's name, the chart's days) and the preview frames. */
const volatile = (page: Page) => [
  page.locator('time'),
  page.locator('code.id'),
  page.locator('code.record'),
  page.locator('td', { hasText: /Mozilla/ }),
  page.locator('svg.chart text'),
  // Sandboxed frames render in their own process, which a full-page capture leaves blank below the viewport;
  // `visit` has checked what they show.
  page.locator('iframe.preview'),
];

/** A page as it settles: a template's or the branding's previews filled in (the page's script renders them on load). */
async function visit(page: Page, path: string) {
  await page.goto(service.baseUrl + path);
  if (path === '/dashboard/branding') {
    const heading = page.frameLocator('iframe[name=preview-page]').locator('form');
    await heading.waitFor({ timeout: 10_000 });
  }
  if (path.startsWith('/dashboard/templates/')) {
    const text = page.frameLocator('iframe[name=preview-text]').locator('pre');
    await expect
      .poll(() => text.textContent(), { timeout: 10_000 })
      .toBe('Welcome, {{name}}. Your workspace is ready.');
    const html = page.frameLocator('iframe[name=preview-html]').locator('h1');
    await expect.poll(() => html.textContent(), { timeout: 10_000 }).toBe('Welcome, {{name}}');
  }
}

async function screen(page: Page, name: string) {
  const shot = await page.screenshot({ fullPage: true, animations: 'disabled', caret: 'hide', mask: volatile(page) });
  expectScreenshot(shot, `dashboard/${name}`);
}

/** The signed-out pages: sign-in, and the code form (a stranger's address per screen: each may ask 5 times). */
async function signedOutScreens(page: Page, suffix: string, check: (page: Page, name: string) => Promise<void>) {
  await page.goto(`${service.baseUrl}/dashboard/login`);
  await check(page, `login.${suffix}`);
  await page.getByLabel('Your email address').fill(`nobody-${suffix}@screens.example`);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  await page.getByRole('heading', { name: 'Check your email' }).waitFor();
  await check(page, `code.${suffix}`);
}

describe('every dashboard page', () => {
  it.each(SCHEMES)('has no serious or critical axe-core violation (%s)', async (scheme) => {
    const context = await browser.newContext({ colorScheme: scheme, storageState: state });
    const page = await context.newPage();
    for (const [name, path] of Object.entries(pages)) {
      await visit(page, path);
      expect(await seriousViolations(page), `${name} ${scheme}`).toEqual([]);
    }
    await context.close();
    const signedOut = await (await browser.newContext({ colorScheme: scheme })).newPage();
    await signedOutScreens(signedOut, `axe-${scheme}`, async (p, name) => {
      expect(await seriousViolations(p), name).toEqual([]);
    });
    await signedOut.context().close();
  });

  it('lets the keyboard reach every control, each with a visible focus', async () => {
    const context = await browser.newContext({ storageState: state, viewport: VIEWPORTS.desktop });
    const page = await context.newPage();
    const CONTROLS = `[...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary')]`;
    for (const [name, path] of Object.entries(pages)) {
      await visit(page, path);
      const controls = (await page.evaluate(`${CONTROLS}.length`)) as number;
      const reached = new Set<number>();
      // A date and time field takes a Tab per part: the budget leaves room for them.
      for (let i = 0; i < controls * 4 + 10 && reached.size < controls; i++) {
        await page.keyboard.press('Tab');
        const focused = (await page.evaluate(`(() => {
          const el = document.activeElement;
          const style = getComputedStyle(el);
          return { index: ${CONTROLS}.indexOf(el), html: el.outerHTML.slice(0, 80), outline: style.outlineStyle };
        })()`)) as { index: number; html: string; outline: string };
        if (focused.index === -1) continue;
        expect(focused.outline, `${name}: ${focused.html}`).not.toBe('none');
        reached.add(focused.index);
      }
      const missed = (await page.evaluate(
        `${CONTROLS}.map((el, i) => i + ': ' + el.outerHTML.slice(0, 80)).filter((_, i) => !${JSON.stringify([...reached])}.includes(i))`,
      )) as string[];
      expect(missed, `${name}: controls the keyboard did not reach`).toEqual([]);
    }
    await context.close();
  });

  // One test per viewport and scheme (1280×800 and 375×812, light and dark): each well inside its time.
  const looks = Object.entries(VIEWPORTS).flatMap(([viewportName, viewport]) =>
    SCHEMES.map((scheme) => [`${viewportName}, ${scheme}`, viewportName, viewport, scheme] as const),
  );
  it.each(looks)('looks as its screenshots (%s)', async (_, viewportName, viewport, scheme) => {
    const options = { viewport, deviceScaleFactor: 1, colorScheme: scheme, reducedMotion: 'reduce' } as const;
    const context = await browser.newContext({ ...options, storageState: state });
    const page = await context.newPage();
    for (const [name, path] of Object.entries(pages)) {
      await visit(page, path);
      await screen(page, `${name}.${viewportName}.${scheme}`);
    }
    await context.close();
    const signedOut = await (await browser.newContext(options)).newPage();
    await signedOutScreens(signedOut, `${viewportName}.${scheme}`, screen);
    await signedOut.context().close();
  });
});
