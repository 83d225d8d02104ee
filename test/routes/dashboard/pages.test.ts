// Checks over every declared dashboard page and form (src/routes/dashboard/index.ts): who may reach it, the CSRF
// token, and the headers every page carries.
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app';
import { can, ROLES } from '../../../src/dashboard/roles';
import { DASHBOARD_PAGES } from '../../../src/routes/dashboard';
import { Browser, signedInMember } from '../../support/dashboard';

/** A concrete path for a declared one (its parameters filled with ids of nothing). */
const concrete = (path: string) => path.replace(/:(\w+)/g, (_, name: string) => `${name.slice(0, 3)}_nothing`);

const signedInPages = DASHBOARD_PAGES.filter((p) => p.access !== 'anyone');
const forms = DASHBOARD_PAGES.filter((p) => p.method === 'post');

describe('every dashboard page', () => {
  it('is declared: the router serves the declarations, the stylesheet and the script, nothing else', () => {
    const registered = buildApp()
      .routes.filter((r) => r.path.startsWith('/dashboard') && r.method !== 'ALL')
      .map((r) => `${r.method} ${r.path}`);
    const declared = DASHBOARD_PAGES.map((p) => `${p.method.toUpperCase()} ${p.path}`);
    expect(registered.sort()).toEqual(
      [...declared, 'GET /dashboard/assets/style.css', 'GET /dashboard/assets/dashboard.js'].sort(),
    );
  });

  it('without a session: a page redirects to sign-in with the way back, a form is refused (401)', async () => {
    const browser = new Browser();
    for (const page of signedInPages) {
      const path = concrete(page.path);
      const res = page.method === 'get' ? await browser.get(path) : await browser.post(path);
      if (page.method === 'get') {
        expect(res.status, path).toBe(303);
        expect(res.location, path).toBe(`/dashboard/login?next=${encodeURIComponent(path)}`);
      } else {
        expect(res.status, path).toBe(401);
        expect(res.text, path).toContain('You are signed out');
      }
    }
  });

  it('a form without the CSRF token, with another token, or from another origin is refused (403)', async () => {
    const { browser } = await signedInMember('owner');
    for (const page of forms) {
      const path = concrete(page.path);
      for (const options of [{ csrf: null }, { csrf: '0'.repeat(32) }, { origin: 'https://evil.example' }]) {
        const res = await browser.post(path, {}, options);
        expect(res.status, `${path} ${JSON.stringify(options)}`).toBe(403);
        expect(res.text).toContain('This form has expired');
      }
    }
  });

  it("a role without the page's permission gets 403, whatever the page showed", async () => {
    for (const role of ROLES) {
      const { browser } = await signedInMember(role);
      for (const page of signedInPages.filter((p) => !can(role, p.access))) {
        const path = concrete(page.path);
        const res = page.method === 'get' ? await browser.get(path) : await browser.post(path);
        expect(res.status, `${role} ${path}`).toBe(403);
        expect(res.text).toContain(`Your role (${role}) cannot do this`);
      }
    }
  });

  it('every page answers an owner 200 with the security headers and no inline script', async () => {
    const { browser } = await signedInMember('owner');
    const pages = DASHBOARD_PAGES.filter((p) => p.method === 'get' && !p.path.includes(':'));
    for (const page of pages) {
      const res = await browser.get(page.path);
      if (res.status === 303) continue; // /dashboard and the sign-in page lead on
      expect(res.status, page.path).toBe(200);
      expect(res.headers.get('Content-Security-Policy'), page.path).toContain("default-src 'none'");
      expect(res.headers.get('X-Frame-Options')).toBe('DENY');
      expect(res.headers.get('Cache-Control')).toBe('no-store');
      expect(res.text.startsWith('<!DOCTYPE html>') || res.text.startsWith('<html'), page.path).toBe(true);
      expect(res.text, page.path).not.toMatch(/<script(?![^>]*\bsrc=)/);
    }
  });

  it('an unknown dashboard path is a 404 page', async () => {
    const res = await new Browser().get('/dashboard/nothing-here');
    expect(res.status).toBe(404);
    expect(res.text).toContain('No such page');
  });
});
