// Templates in the dashboard: create, edit with a preview of the unsaved fields, send a test to yourself, delete,
// with the API's rules.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, eventually, inbox } from '../../support/api';
import { fieldValue, mailKey, signedInMember } from '../../support/dashboard';

type TemplateData = { id: string; name: string; subject: string; htmlBody: string; textBody: string };

async function apiTemplate(key: string) {
  const res = await call<TemplateData>('POST', '/api/v1/templates', {
    token: key,
    body: { name: 'welcome', subject: 'Hi {{name}}', htmlBody: '<p>Hello {{name}}</p>', textBody: 'Hello {{name}}' },
  });
  return res.json.data.id;
}

describe('GET /dashboard/templates', () => {
  it("lists the account's templates; a viewer gets no link to make one, and its fields are read-only", async () => {
    const { browser, accountId } = await signedInMember('viewer');
    const id = await apiTemplate(await mailKey(accountId));
    const list = await browser.get('/dashboard/templates');
    expect(list.text).toContain(`<a href="/dashboard/templates/${id}">welcome</a>`);
    expect(list.text).not.toContain('/dashboard/templates/new');
    const page = await browser.get(`/dashboard/templates/${id}`);
    expect(page.text).toContain(
      '<textarea name="htmlBody" rows="12" readonly="">&lt;p&gt;Hello {{name}}&lt;/p&gt;</textarea>',
    );
    expect(page.text).not.toContain('>Save</button>');
    expect(page.text).toContain('<script src="/dashboard/assets/dashboard.js" defer=""></script>');
    expect((await browser.get('/dashboard/templates/tpl_nothing')).status).toBe(404);
  });
});

describe('POST /dashboard/templates', () => {
  it('a developer creates one the API reads; the audit log has it', async () => {
    const { browser, accountId } = await signedInMember('developer');
    const res = await browser.post('/dashboard/templates', {
      name: 'receipt',
      subject: 'Receipt {{number}}',
      htmlBody: '<p>Thanks</p>',
      textBody: '',
    });
    expect(res.status).toBe(303);
    const list = await call<{ items: { id: string; name: string }[] }>('GET', '/api/v1/templates', {
      token: await mailKey(accountId),
    });
    expect(list.json.data.items.map((t) => t.name)).toEqual(['receipt']);
    const audit = await env.DB.prepare('SELECT target FROM audit_log WHERE account_id = ? AND action = ?')
      .bind(accountId, 'template.created')
      .first();
    expect(audit).toEqual({ target: list.json.data.items[0]!.id });
  });

  it('400 on the page with the API rule: a template needs htmlBody or textBody', async () => {
    const { browser } = await signedInMember('owner');
    const res = await browser.post('/dashboard/templates', {
      name: 'empty',
      subject: 'Nothing',
      htmlBody: '',
      textBody: '',
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('htmlBody: htmlBody or textBody is required');
  });
});

describe('POST /dashboard/templates/{templateId}', () => {
  it('saves the changed fields; emptying the only body is refused (400)', async () => {
    const { browser, accountId } = await signedInMember('admin');
    const key = await mailKey(accountId);
    const id = await apiTemplate(key);
    const saved = await browser.post(`/dashboard/templates/${id}`, {
      name: 'welcome',
      subject: 'Welcome, {{name}}',
      htmlBody: '<h1>Welcome {{name}}</h1>',
      textBody: 'Welcome {{name}}',
    });
    expect(saved.status).toBe(303);
    const read = await call<TemplateData>('GET', `/api/v1/templates/${id}`, { token: key });
    expect(read.json.data).toMatchObject({ subject: 'Welcome, {{name}}', htmlBody: '<h1>Welcome {{name}}</h1>' });
  });
});

describe('POST /dashboard/templates/preview', () => {
  it('fills the unsaved HTML with the sample vars (escaped), in a sandbox with no script; text as plain text', async () => {
    const { browser } = await signedInMember('viewer');
    const fields = {
      subject: 'Hi',
      htmlBody: '<p>Hello {{name}}, {{plan}}</p>',
      textBody: 'Hello {{name}}',
      vars: 'name=<Ada>',
    };
    const html = await browser.post('/dashboard/templates/preview?part=html', fields);
    expect(html.status).toBe(200);
    expect(html.text).toBe('<p>Hello &lt;Ada&gt;, {{plan}}</p>');
    expect(html.headers.get('Content-Security-Policy')).toMatch(/^sandbox; default-src 'none'/);
    const text = await browser.post('/dashboard/templates/preview?part=text', fields);
    expect(text.text).toBe('Hello <Ada>');
    expect(text.headers.get('Content-Type')).toBe('text/plain; charset=utf-8');
  });
});

describe('POST /dashboard/templates/{templateId}/test and /delete', () => {
  it('sends the template to the member with the sample vars, then deletes it', async () => {
    const { browser, accountId, email } = await signedInMember('owner');
    const key = await mailKey(accountId);
    const id = await apiTemplate(key);
    const page = await browser.get(`/dashboard/templates/${id}`);
    expect(page.text).toContain(`Send to ${email}`);
    const sent = await browser.post(`/dashboard/templates/${id}/test`, { vars: 'name=Grace' });
    expect(sent.status).toBe(303);
    // Besides the mail saying they were added and the sign-in code: the test.
    const test = await eventually(
      async () => (await inbox(email)).find((m) => m.subject === 'Hi Grace'),
      'the test mail',
    );
    expect(test.text).toContain('Hello Grace');
    const missing = await browser.post(`/dashboard/templates/${id}/test`, { vars: '' });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('vars: missing values for name');
    expect((await browser.post(`/dashboard/templates/${id}/delete`)).status).toBe(303);
    expect((await call('GET', `/api/v1/templates/${id}`, { token: key })).status).toBe(404);
    expect(fieldValue(page.text, 'csrf')).toBe(browser.cookies.get('pc_csrf'));
  });
});
