// What the dashboard's browser tests share: signing in through the pages, axe-core, the operator API.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect, inject } from 'vitest';
import { codeFromInbox } from './browser';
import { succeeded } from './shared-service';

const service = inject('e2e');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Signs in through the pages: the address, then the code the local inbox received; lands on the overview. */
export async function signIn(page: Page, email: string) {
  await page.goto(`${service.baseUrl}/dashboard`);
  expect(new URL(page.url()).pathname).toBe('/dashboard/login');
  await page.getByLabel('Your email address').fill(email);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  await page.getByRole('heading', { name: 'Check your email' }).waitFor();
  // A member also gets the mail saying they were added: the code is in the sign-in mail.
  await page.getByLabel('Code').fill(await codeFromInbox(service, email, 'Your postcode sign-in code'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** axe-core's serious and critical violations on the page (run in the page, as a browser extension would). */
export async function seriousViolations(page: Page) {
  await page.evaluate(axeSource);
  const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** A call that must succeed, with the operator's token unless given: its `data`. */
export const api = <T>(method: string, path: string, body?: unknown, token = service.adminToken) =>
  succeeded<T>(method, path, token, body);
