// The dashboard in a real browser, against the service as `npm start` runs it: sign-in with the code from the
// local inbox, each page's main action and its effect through the API, what a viewer may not do (also forged),
// CSRF, sign-out and revoked sessions, axe-core on every page, the keyboard, and screenshots of every page at
// 1280×800 and 375×812 in light and dark, compared with those under ./screens/dashboard.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { codeFromInbox, launchChromium } from './browser';
import { expectScreenshot } from './screens';

const service = inject('e2e');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 375, height: 812 } } as const;
const SCHEMES = ['light', 'dark'] as const;
/** Members this test adds to the demo account (the e2e service starts from an empty state). */
const DEVELOPER = 'developer@demo.postcode.dev';
const VIEWER = 'viewer@demo.postcode.dev';
const SIGNED_IN_PAGES = ['overview', 'members', 'sessions', 'audit-log'] as const;

type MemberList = { members: { email: string; role: string }[] };

async function operator<T>(path: string): Promise<T> {
  const res = await fetch(service.baseUrl + path, { headers: { Authorization: `Bearer ${service.adminToken}` } });
  const json = (await res.json()) as { data: T };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.data;
}

/** Signs in through the pages: the address, then the code the local inbox received. */
async function signIn(page: Page, email: string) {
  await page.goto(`${service.baseUrl}/dashboard`);
  expect(new URL(page.url()).pathname).toBe('/dashboard/login');
  await page.getByLabel('Your email address').fill(email);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  await page.getByRole('heading', { name: 'Check your email' }).waitFor();
  await page.getByLabel('Code').fill(await codeFromInbox(service, email));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** axe-core's serious and critical violations on the page (run in the page, as a browser extension would). */
async function seriousViolations(page: Page) {
  await page.evaluate(axeSource);
  const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * What changes from run to run is masked in screenshots: times, session ids, the browser's name, and the
 * overview's figures (the other e2e files send through the demo account too).
 */
const volatile = (page: Page) => [
  page.locator('time'),
  page.locator('svg.chart'),
  page.locator('.stat .value, .stat .label:nth-child(3)'),
  page.locator('section[aria-labelledby=codes] td:not(:first-child)'),
  page.locator('td', { hasText: /^dss_[a-z2-7]+$/ }),
  page.locator('td', { hasText: /Mozilla/ }),
];

async function screen(page: Page, name: string) {
  const shot = await page.screenshot({ fullPage: true, animations: 'disabled', caret: 'hide', mask: volatile(page) });
  expectScreenshot(shot, `dashboard/${name}`);
}

let browser: Browser;
let owner: BrowserContext;
let ownerPage: Page;

beforeAll(async () => {
  browser = await launchChromium();
  owner = await browser.newContext({ viewport: VIEWPORTS.desktop, deviceScaleFactor: 1, reducedMotion: 'reduce' });
  ownerPage = await owner.newPage();
});
afterAll(async () => {
  await browser?.close();
});

describe('the dashboard in Chromium', () => {
  it('the demo owner signs in with the code from the inbox', async () => {
    await signIn(ownerPage, service.dashboardOwner);
    expect(await ownerPage.locator('header .account').textContent()).toContain(service.dashboardOwner);
  });

  it('Overview: mail sent through the API shows in the figures of the metrics API', async () => {
    const res = await fetch(`${service.baseUrl}/api/v1/emails`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.mailKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ to: 'overview@example.com', subject: 'Overview', text: 'hi' }),
    });
    expect(res.status).toBe(200);
    const metrics = async () =>
      (
        (await (
          await fetch(`${service.baseUrl}/api/v1/metrics`, { headers: { Authorization: `Bearer ${service.mailKey}` } })
        ).json()) as { data: { emails: { totals: { sent: number } } } }
      ).data.emails.totals.sent;
    await expect.poll(metrics, { timeout: 15_000 }).toBeGreaterThan(0);
    const sent = await metrics();
    await ownerPage.reload();
    const shown = await ownerPage.locator('.stat').filter({ hasText: /^Sent/ }).locator('.value').textContent();
    expect(Number(shown)).toBeGreaterThanOrEqual(sent);
    expect(await ownerPage.getByRole('img', { name: 'Mail per day, last 7 days' }).isVisible()).toBe(true);
  });

  it('Members: the owner adds a developer and a viewer; the operator API lists them', async () => {
    await ownerPage.getByRole('link', { name: 'Members' }).click();
    for (const [email, role] of [
      [DEVELOPER, 'developer'],
      [VIEWER, 'viewer'],
    ] as const) {
      await ownerPage.getByLabel('Email address').fill(email);
      await ownerPage.locator('#new-member-role').selectOption(role);
      await ownerPage.getByRole('button', { name: 'Add member' }).click();
      await ownerPage.getByRole('status').filter({ hasText: 'Member added' }).waitFor();
    }
    const { members } = await operator<MemberList>(`/admin/v1/accounts/${service.accountId}/members`);
    expect(members.map((m) => [m.email, m.role]).sort()).toEqual(
      [
        [service.dashboardOwner, 'owner'],
        [DEVELOPER, 'developer'],
        [VIEWER, 'viewer'],
      ].sort(),
    );
  });

  it('Audit log: shows who added them', async () => {
    await ownerPage.getByRole('link', { name: 'Audit log' }).click();
    const rows = ownerPage.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(4);
    expect(await rows.first().textContent()).toContain(`${service.dashboardOwner}member.added${VIEWER}`);
  });

  it('every page has no serious or critical axe violation, in light and dark', async () => {
    for (const scheme of SCHEMES) {
      await ownerPage.emulateMedia({ colorScheme: scheme });
      for (const name of SIGNED_IN_PAGES) {
        await ownerPage.goto(`${service.baseUrl}/dashboard/${name}`);
        expect(await seriousViolations(ownerPage), `${name} ${scheme}`).toEqual([]);
      }
      const signedOut = await browser.newContext({ colorScheme: scheme });
      const page = await signedOut.newPage();
      await page.goto(`${service.baseUrl}/dashboard/login`);
      expect(await seriousViolations(page), `login ${scheme}`).toEqual([]);
      await page.getByLabel('Your email address').fill(`nobody-${scheme}@demo.postcode.dev`);
      await page.getByRole('button', { name: 'Email me a code' }).click();
      await page.getByRole('heading', { name: 'Check your email' }).waitFor();
      expect(await seriousViolations(page), `code ${scheme}`).toEqual([]);
      await signedOut.close();
    }
    await ownerPage.emulateMedia({ colorScheme: 'light' });
  });

  it('the keyboard reaches every control on the Members page, and the focus is visible', async () => {
    await ownerPage.goto(`${service.baseUrl}/dashboard/members`);
    const CONTROLS = `[...document.querySelectorAll('a[href], button, input:not([type=hidden]), select')]`;
    const controls = (await ownerPage.evaluate(`${CONTROLS}.length`)) as number;
    const reached = new Set<number>();
    for (let i = 0; i < controls + 2; i++) {
      await ownerPage.keyboard.press('Tab');
      const focused = (await ownerPage.evaluate(`(() => {
        const el = document.activeElement;
        const style = getComputedStyle(el);
        return { index: ${CONTROLS}.indexOf(el), html: el.outerHTML.slice(0, 100), outline: style.outlineStyle, width: style.outlineWidth };
      })()`)) as { index: number; html: string; outline: string; width: string };
      if (focused.index === -1) continue;
      expect(focused.outline, focused.html).not.toBe('none');
      expect(focused.width, focused.html).not.toBe('0px');
      reached.add(focused.index);
    }
    expect(reached.size).toBe(controls);
  });

  it('screenshots of every page at 1280×800 and 375×812, light and dark', async () => {
    const state = await owner.storageState();
    for (const [viewportName, viewport] of Object.entries(VIEWPORTS)) {
      for (const scheme of SCHEMES) {
        const options = { viewport, deviceScaleFactor: 1, colorScheme: scheme, reducedMotion: 'reduce' } as const;
        const signedIn = await browser.newContext({ ...options, storageState: state });
        const page = await signedIn.newPage();
        for (const name of SIGNED_IN_PAGES) {
          await page.goto(`${service.baseUrl}/dashboard/${name}`);
          await screen(page, `${name}.${viewportName}.${scheme}`);
        }
        await signedIn.close();
        const signedOut = await browser.newContext(options);
        const login = await signedOut.newPage();
        await login.goto(`${service.baseUrl}/dashboard/login`);
        await screen(login, `login.${viewportName}.${scheme}`);
        // A stranger's address per screen: each address may ask for a code RATE_SIGNIN_PER_ADDRESS times.
        await login.getByLabel('Your email address').fill(`nobody-${viewportName}-${scheme}@demo.postcode.dev`);
        await login.getByRole('button', { name: 'Email me a code' }).click();
        await login.getByRole('heading', { name: 'Check your email' }).waitFor();
        await screen(login, `code.${viewportName}.${scheme}`);
        await signedOut.close();
      }
    }
  });

  it('a viewer sees no control that changes anything, and a forged form is refused (403)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, VIEWER);
    expect(await page.getByRole('button', { name: /Add member|Remove|Change role|Sign out everywhere/ }).count()).toBe(
      0,
    );
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const forged = await page.request.post(`${service.baseUrl}/dashboard/members`, {
      form: { email: 'mallory@demo.postcode.dev', role: 'owner', csrf },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    const { members } = await operator<MemberList>(`/admin/v1/accounts/${service.accountId}/members`);
    expect(members.map((m) => m.email)).not.toContain('mallory@demo.postcode.dev');
    await context.close();
  });

  it('a form without the CSRF token is refused (403) and changes nothing', async () => {
    const res = await ownerPage.request.post(`${service.baseUrl}/dashboard/members`, {
      form: { email: 'nocsrf@demo.postcode.dev', role: 'viewer' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    const { members } = await operator<MemberList>(`/admin/v1/accounts/${service.accountId}/members`);
    expect(members.map((m) => m.email)).not.toContain('nocsrf@demo.postcode.dev');
  });

  it("a session an owner signs out is refused: the developer's browser is back at sign-in", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, DEVELOPER);
    await ownerPage.goto(`${service.baseUrl}/dashboard/members`);
    const row = ownerPage.getByRole('row').filter({ hasText: DEVELOPER });
    await row.getByRole('button', { name: 'Sign out everywhere' }).click();
    await ownerPage.getByRole('status').filter({ hasText: 'signed out' }).waitFor();
    await page.reload();
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    await context.close();
  });

  it('Sign out ends the session: the pages lead to sign-in again', async () => {
    await ownerPage.getByRole('button', { name: 'Sign out', exact: true }).click();
    await ownerPage.getByRole('heading', { name: 'Sign in to postcode' }).waitFor();
    await ownerPage.goto(`${service.baseUrl}/dashboard/members`);
    expect(new URL(ownerPage.url()).pathname).toBe('/dashboard/login');
  });
});
