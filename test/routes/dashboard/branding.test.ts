// Branding in the dashboard: saved with the operator API's rules, previewed as the hosted page in any language.
import { describe, expect, it } from 'vitest';
import { admin } from '../../support/api';
import { signedInMember } from '../../support/dashboard';

const FIELDS = { productName: 'Acme Cloud', logoUrl: '', accentColor: '#4F46E5', supportEmail: 'help@acme.example' };

describe('POST /dashboard/branding', () => {
  it('a developer saves the branding the operator API reads; an empty field is cleared', async () => {
    const { browser, accountId } = await signedInMember('developer');
    expect((await browser.post('/dashboard/branding', FIELDS)).status).toBe(303);
    const read = await admin<Record<string, unknown>>('GET', `/admin/v1/accounts/${accountId}/otp-branding`);
    expect(read.json.data).toMatchObject({
      productName: 'Acme Cloud',
      logoUrl: null,
      accentColor: '#4f46e5',
      supportEmail: 'help@acme.example',
    });
    const page = await browser.get('/dashboard/branding');
    expect(page.text).toContain('value="Acme Cloud"');
  });

  it('400 on the page for a colour or a logo URL the API refuses; a viewer gets read-only fields', async () => {
    const { browser, accountId } = await signedInMember('owner');
    const colour = await browser.post('/dashboard/branding', { ...FIELDS, accentColor: 'red' });
    expect(colour.status).toBe(400);
    expect(colour.text).toContain('accentColor: expected a colour as #rrggbb');
    const logo = await browser.post('/dashboard/branding', { ...FIELDS, logoUrl: 'http://insecure.example/x.png' });
    expect(logo.status).toBe(400);
    const viewer = await signedInMember('viewer', accountId);
    const page = await viewer.browser.get('/dashboard/branding');
    expect(page.text).toContain('readonly=""');
    expect(page.text).not.toContain('>Save</button>');
  });
});

describe('POST /dashboard/branding/preview', () => {
  it('renders the hosted page with the unsaved branding in the chosen language, in a sandbox with no script', async () => {
    const { browser } = await signedInMember('viewer');
    const res = await browser.post('/dashboard/branding/preview', { ...FIELDS, language: 'de' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Acme Cloud');
    expect(res.text).toContain('Bestätigen');
    expect(res.text).toContain('help@acme.example');
    expect(res.headers.get('Content-Language')).toBe('de');
    const policy = res.headers.get('Content-Security-Policy')!;
    expect(policy).toMatch(/^sandbox; default-src 'none'/);
    expect(policy).not.toContain('script-src');
    expect(policy).toContain("frame-ancestors 'self'");
  });
});
