// The dashboard in a real browser, against the service as `npm start` runs it: sign-in with the code from the
// local inbox as the demo owner, each page's main action and its effect through the API, what a viewer may not do
// (also forged), CSRF, sign-out and revoked sessions. Every page's look, the keyboard and axe-core's verdict:
// dashboard-screens.test.ts.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from './browser';
import { api, signIn } from './dashboard-browser';

const service = inject('e2e');

const VIEWPORT = { width: 1280, height: 800 };
/** Members this test adds to the demo account (the e2e service starts from an empty state). */
const DEVELOPER = 'developer@demo.postcode.dev';
const VIEWER = 'viewer@demo.postcode.dev';

type MemberList = { members: { email: string; role: string }[] };

const operator = <T>(path: string) => api<T>('GET', path);

let browser: Browser;
let owner: BrowserContext;
let ownerPage: Page;

beforeAll(async () => {
  browser = await launchChromium();
  owner = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1, reducedMotion: 'reduce' });
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
    // Newest first: the viewer, the developer; the start script's keys and token were the operator's.
    const rows = ownerPage.locator('tbody tr');
    expect(await rows.nth(0).textContent()).toContain(`${service.dashboardOwner}member.added${VIEWER}`);
    expect(await rows.nth(1).textContent()).toContain(`${service.dashboardOwner}member.added${DEVELOPER}`);
    expect(await ownerPage.locator('tbody').textContent()).toContain('operatorkey.created');
  });

  it('Emails: the send log finds a scheduled email, its page calls it off; the API shows it CANCELED', async () => {
    const to = 'scheduled-e2e@example.com';
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const { id } = await api<{ id: string }>(
      'POST',
      '/api/v1/emails',
      { to, subject: 'Called off in the dashboard', text: 'hi', scheduledAt: tomorrow },
      service.mailKey,
    );
    await ownerPage.getByRole('link', { name: 'Emails', exact: true }).click();
    await ownerPage.getByLabel('Recipient').fill(to);
    await ownerPage.getByRole('button', { name: 'Filter' }).click();
    await ownerPage.getByRole('link', { name: 'Called off in the dashboard' }).click();
    await ownerPage.getByRole('button', { name: 'Cancel the email' }).click();
    await ownerPage.getByRole('status').filter({ hasText: 'The email is canceled.' }).waitFor();
    const detail = await api<{ status: string }>('GET', `/api/v1/emails/${id}`, undefined, service.mailKey);
    expect(detail.status).toBe('CANCELED');
  });

  it("Suppressions: an address added in the form is on the API's list, and lifted again", async () => {
    const address = 'suppressed-e2e@example.com';
    const onList = async () =>
      (
        await api<{ suppressions: { email: string }[] }>('GET', '/api/v1/suppressions', undefined, service.mailKey)
      ).suppressions.some((s) => s.email === address);
    await ownerPage.getByRole('link', { name: 'Suppressions' }).click();
    await ownerPage.getByLabel('Email address').fill(address);
    await ownerPage.getByLabel('Note').fill('asked by phone');
    await ownerPage.getByRole('button', { name: 'Suppress', exact: true }).click();
    await ownerPage.getByRole('status').filter({ hasText: 'Address suppressed.' }).waitFor();
    expect(await onList()).toBe(true);
    await ownerPage.getByRole('button', { name: `Lift the suppression of ${address}` }).click();
    await ownerPage.getByRole('status').filter({ hasText: 'Suppression lifted.' }).waitFor();
    expect(await onList()).toBe(false);
  });

  it('Domains: a domain added in the form lists its records with copy buttons; the API has it', async () => {
    await ownerPage.getByRole('link', { name: 'Domains' }).click();
    await ownerPage.getByLabel('Domain name').fill('e2e-dashboard.example');
    await ownerPage.getByRole('button', { name: 'Add domain' }).click();
    await ownerPage.getByRole('link', { name: 'e2e-dashboard.example' }).click();
    // The page's script shows the copy buttons once it runs.
    await ownerPage.getByRole('button', { name: 'Copy the name of the dmarc record' }).waitFor();
    const { domains } = await api<{ domains: { name: string }[] }>(
      'GET',
      '/api/v1/domains',
      undefined,
      service.mailKey,
    );
    expect(domains.map((d) => d.name)).toContain('e2e-dashboard.example');
  });

  it('Webhooks: an endpoint added in the form (its secret shown once) gets a test event in its delivery log', async () => {
    await ownerPage.getByRole('link', { name: 'Webhooks' }).click();
    await ownerPage.getByLabel('URL').fill('http://127.0.0.1:9/nothing-listens');
    await ownerPage.getByLabel('Description').fill('e2e endpoint');
    await ownerPage.getByLabel('email.failed').check();
    await ownerPage.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await ownerPage.getByLabel('Signing secret').inputValue()).toMatch(/^whsec_/);
    const { webhooks } = await api<{ webhooks: { description?: string }[] }>(
      'GET',
      '/api/v1/webhooks',
      undefined,
      service.mailKey,
    );
    expect(webhooks.map((w) => w.description)).toContain('e2e endpoint');
    await ownerPage.getByRole('link', { name: 'e2e endpoint' }).click();
    await ownerPage.getByRole('button', { name: 'Send a test event' }).click();
    await ownerPage.getByRole('status').filter({ hasText: 'Test event queued' }).waitFor();
    await expect
      .poll(async () => {
        await ownerPage.reload();
        return ownerPage.locator('td[data-label="Event"]').allTextContents();
      })
      .toContain('webhook.test');
  });

  it('API keys: a key created in the form is shown once and works; revoked, the API refuses it', async () => {
    await ownerPage.getByRole('link', { name: 'API keys' }).click();
    await ownerPage.getByLabel('Name').fill('e2e key');
    await ownerPage.getByRole('button', { name: 'Create key' }).click();
    const key = await ownerPage.getByLabel('API key').inputValue();
    const emails = () => fetch(`${service.baseUrl}/api/v1/emails`, { headers: { Authorization: `Bearer ${key}` } });
    expect((await emails()).status).toBe(200);
    await ownerPage.getByRole('button', { name: 'Revoke e2e key' }).click();
    await ownerPage.getByRole('status').filter({ hasText: 'API key revoked' }).waitFor();
    expect((await emails()).status).toBe(401);
  });

  it('Branding: the preview of the hosted page follows the product name typed; saved, the operator API has it', async () => {
    const path = `/admin/v1/accounts/${service.accountId}/otp-branding`;
    const before = await api<Record<string, string | null>>('GET', path);
    await ownerPage.getByRole('link', { name: 'Branding' }).click();
    await ownerPage.getByLabel('Product name').fill('Demo Brand');
    await ownerPage.getByLabel('Preview in').selectOption('fr');
    const frame = ownerPage.frameLocator('iframe[name=preview-page]');
    await expect.poll(() => frame.locator('body').textContent(), { timeout: 10_000 }).toContain('Demo Brand');
    expect(await frame.locator('html').getAttribute('lang')).toBe('fr');
    await ownerPage.getByRole('button', { name: 'Save' }).click();
    await ownerPage.getByRole('status').filter({ hasText: 'Branding saved' }).waitFor();
    const saved = await api<{ productName: string }>('GET', path);
    expect(saved.productName).toBe('Demo Brand');
    // The other e2e files share the demo account: its look goes back as it was.
    const { productName, logoUrl, accentColor, supportEmail } = before;
    await api('PUT', path, { productName, logoUrl, accentColor, supportEmail });
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
