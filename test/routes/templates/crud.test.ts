// Template CRUD: create, list (route 5), get (route 6), update and delete.
// Sending from a template and the health-check email are in template-send.test.ts.
import { describe, expect, it } from 'vitest';
import { call, expectError, newAccount, uniqueAddress, waitForInbox } from '../../support/api';
import type { SavedTemplate, TemplateDeleted, TemplateList } from '../../support/responses';
import { createTemplate, getTemplate } from '../../support/templates';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /api/v1/templates (create)', () => {
  it('creates a template and answers 201 with all fields', async () => {
    const account = await newAccount();
    const res = await call<SavedTemplate>('POST', '/api/v1/templates', {
      token: account.mailKey,
      body: { name: 'Welcome', subject: 'Welcome {{name}}', htmlBody: '<h1>Hi {{name}}</h1>', textBody: 'Hi {{name}}' },
    });
    expect(res.status).toBe(201);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toMatchObject({
      name: 'Welcome',
      subject: 'Welcome {{name}}',
      htmlBody: '<h1>Hi {{name}}</h1>',
      textBody: 'Hi {{name}}',
    });
    expect(res.json.data.id).toMatch(/^tpl_/);
    expect(res.json.data.updatedAt).toMatch(ISO_MS);

    const got = await getTemplate(account.mailKey, res.json.data.id);
    expect(got.status).toBe(200);
    expect(got.json.data).toEqual({
      id: res.json.data.id,
      name: 'Welcome',
      subject: 'Welcome {{name}}',
      htmlBody: '<h1>Hi {{name}}</h1>',
      textBody: 'Hi {{name}}',
    });
  });

  it('accepts a template with only a text body (htmlBody becomes empty)', async () => {
    const account = await newAccount();
    const res = await call<SavedTemplate>('POST', '/api/v1/templates', {
      token: account.mailKey,
      body: { name: 'Text only', subject: 'Plain', textBody: 'Just text' },
    });
    expect(res.status).toBe(201);
    expect(res.json.data.htmlBody).toBe('');
    expect(res.json.data.textBody).toBe('Just text');
  });

  it('gives each template its own id', async () => {
    const account = await newAccount();
    const a = await createTemplate(account.mailKey);
    const b = await createTemplate(account.mailKey);
    expect(a.id).not.toBe(b.id);
  });

  const invalidBodies: [string, unknown, RegExp][] = [
    ['neither htmlBody nor textBody', { name: 'n', subject: 's' }, /htmlBody/],
    ['both bodies empty', { name: 'n', subject: 's', htmlBody: '', textBody: '' }, /htmlBody/],
    ['name missing', { subject: 's', textBody: 't' }, /name/],
    ['name empty', { name: '', subject: 's', textBody: 't' }, /name/],
    ['subject missing', { name: 'n', textBody: 't' }, /subject/],
    ['subject with CR/LF', { name: 'n', subject: 'a\r\nBcc: x@example.com', textBody: 't' }, /subject/],
    ['subject over 998 characters', { name: 'n', subject: 'x'.repeat(999), textBody: 't' }, /subject/],
    ['htmlBody not a string', { name: 'n', subject: 's', htmlBody: 5 }, /htmlBody/],
    ['unknown field', { name: 'n', subject: 's', textBody: 't', owner: 'someone' }, /owner/],
  ];
  for (const [what, body, field] of invalidBodies) {
    it(`400 INVALID_INPUT when ${what}, and nothing is stored`, async () => {
      const account = await newAccount();
      const res = await call('POST', '/api/v1/templates', { token: account.mailKey, body });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toMatch(field);
      const list = await call<TemplateList>('GET', '/api/v1/templates', { token: account.mailKey });
      expect(list.json.data.total).toBe(0);
    });
  }

  it('400 INVALID_INPUT on malformed JSON', async () => {
    const account = await newAccount();
    const res = await call('POST', '/api/v1/templates', {
      token: account.mailKey,
      rawBody: '{"name": "n",',
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(res, 400, 'INVALID_INPUT');
  });

  it('415 UNSUPPORTED_MEDIA_TYPE without a JSON content type', async () => {
    const account = await newAccount();
    const res = await call('POST', '/api/v1/templates', {
      token: account.mailKey,
      rawBody: JSON.stringify({ name: 'n', subject: 's', textBody: 't' }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('GET /api/v1/templates (list)', () => {
  it('lists the account templates with id, name, subject and updatedAt', async () => {
    const account = await newAccount();
    const created = await createTemplate(account.mailKey, { name: 'Receipt', subject: 'Your receipt {{no}}' });
    const res = await call<TemplateList>('GET', '/api/v1/templates', { token: account.mailKey });
    expect(res.status).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toMatchObject({ page: 1, total: 1 });
    expect(res.json.data.items).toEqual([
      { id: created.id, name: 'Receipt', subject: 'Your receipt {{no}}', updatedAt: expect.stringMatching(ISO_MS) },
    ]);
  });

  it('an account without templates gets an empty list', async () => {
    const account = await newAccount();
    const res = await call<TemplateList>('GET', '/api/v1/templates', { token: account.mailKey });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ page: 1, limit: 20, total: 0, items: [] });
  });

  it('pages with page and limit, total counting every template', async () => {
    const account = await newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createTemplate(account.mailKey, { name: `T${i}` })).id);

    const seen: string[] = [];
    for (const [page, expected] of [
      [1, 2],
      [2, 2],
      [3, 1],
    ] as const) {
      const res = await call<TemplateList>('GET', `/api/v1/templates?page=${page}&limit=2`, { token: account.mailKey });
      expect(res.status).toBe(200);
      expect(res.json.data).toMatchObject({ page, limit: 2, total: 5 });
      expect(res.json.data.items).toHaveLength(expected);
      seen.push(...res.json.data.items.map((t) => t.id));
    }
    expect(new Set(seen).size).toBe(5);
    expect([...seen].sort()).toEqual([...ids].sort());

    const beyond = await call<TemplateList>('GET', '/api/v1/templates?page=4&limit=2', { token: account.mailKey });
    expect(beyond.status).toBe(200);
    expect(beyond.json.data).toMatchObject({ page: 4, limit: 2, total: 5, items: [] });
  });

  it('uses a default limit of 20', async () => {
    const account = await newAccount();
    for (let i = 0; i < 21; i++) await createTemplate(account.mailKey, { name: `T${i}` });
    const first = await call<TemplateList>('GET', '/api/v1/templates', { token: account.mailKey });
    expect(first.status).toBe(200);
    expect(first.json.data).toMatchObject({ page: 1, limit: 20, total: 21 });
    expect(first.json.data.items).toHaveLength(20);
    const second = await call<TemplateList>('GET', '/api/v1/templates?page=2', { token: account.mailKey });
    expect(second.json.data).toMatchObject({ page: 2, limit: 20, total: 21 });
    expect(second.json.data.items).toHaveLength(1);
  });

  it('accepts the limit bounds 1 and 100', async () => {
    const account = await newAccount();
    await createTemplate(account.mailKey);
    await createTemplate(account.mailKey);
    const one = await call<TemplateList>('GET', '/api/v1/templates?limit=1', { token: account.mailKey });
    expect(one.status).toBe(200);
    expect(one.json.data).toMatchObject({ limit: 1, total: 2 });
    expect(one.json.data.items).toHaveLength(1);
    const hundred = await call<TemplateList>('GET', '/api/v1/templates?limit=100', { token: account.mailKey });
    expect(hundred.status).toBe(200);
    expect(hundred.json.data).toMatchObject({ limit: 100, total: 2 });
    expect(hundred.json.data.items).toHaveLength(2);
  });

  for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=-1', 'limit=2.5', 'page=0', 'page=abc']) {
    it(`400 INVALID_INPUT for ${query}`, async () => {
      const account = await newAccount();
      const res = await call('GET', `/api/v1/templates?${query}`, { token: account.mailKey });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toContain(query.split('=')[0]!);
    });
  }

  it("lists only the caller's own templates", async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const own = await createTemplate(mine.mailKey, { name: 'mine' });
    const foreign = await createTemplate(other.mailKey, { name: 'theirs' });
    await createTemplate(other.mailKey, { name: 'theirs too' });

    const res = await call<TemplateList>('GET', '/api/v1/templates?limit=100', { token: mine.mailKey });
    expect(res.status).toBe(200);
    expect(res.json.data.total).toBe(1);
    const ids = res.json.data.items.map((t) => t.id);
    expect(ids).toEqual([own.id]);
    expect(ids).not.toContain(foreign.id);

    const theirs = await call<TemplateList>('GET', '/api/v1/templates?limit=100', { token: other.mailKey });
    expect(theirs.json.data.total).toBe(2);
  });
});

describe('GET /api/v1/templates/{templateId}', () => {
  it('returns id, name, subject, htmlBody and textBody', async () => {
    const account = await newAccount();
    const created = await createTemplate(account.mailKey, {
      name: 'Reset',
      subject: 'Reset for {{user}}',
      htmlBody: '<a href="{{link}}">reset</a>',
      textBody: 'Reset: {{link}}',
    });
    const res = await getTemplate(account.mailKey, created.id);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      data: {
        id: created.id,
        name: 'Reset',
        subject: 'Reset for {{user}}',
        htmlBody: '<a href="{{link}}">reset</a>',
        textBody: 'Reset: {{link}}',
      },
    });
  });

  it('404 TEMPLATE_NOT_FOUND for an unknown id', async () => {
    const account = await newAccount();
    expectError(await getTemplate(account.mailKey, 'tpl_doesnotexist000000'), 404, 'TEMPLATE_NOT_FOUND');
  });

  it("404 TEMPLATE_NOT_FOUND for another account's template", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const template = await createTemplate(owner.mailKey);
    expectError(await getTemplate(stranger.mailKey, template.id), 404, 'TEMPLATE_NOT_FOUND');
    expect((await getTemplate(owner.mailKey, template.id)).status).toBe(200);
  });

  it('400 INVALID_INPUT for an id shorter than 3 characters', async () => {
    const account = await newAccount();
    const res = await getTemplate(account.mailKey, 'ab');
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toMatch(/templateId/);
  });

  it('400 INVALID_INPUT for an id longer than 128 characters', async () => {
    const account = await newAccount();
    const res = await getTemplate(account.mailKey, `tpl_${'x'.repeat(125)}`);
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toMatch(/templateId/);
  });

  it('ids of exactly 3 and 128 characters pass validation and are looked up (404)', async () => {
    const account = await newAccount();
    expectError(await getTemplate(account.mailKey, 'abc'), 404, 'TEMPLATE_NOT_FOUND');
    expectError(await getTemplate(account.mailKey, `tpl_${'x'.repeat(124)}`), 404, 'TEMPLATE_NOT_FOUND');
  });
});

describe('PUT /api/v1/templates/{templateId}', () => {
  it('updates the given fields and keeps the others', async () => {
    const account = await newAccount();
    const created = await createTemplate(account.mailKey, {
      name: 'Old',
      subject: 'Old subject',
      htmlBody: '<p>old html</p>',
      textBody: 'old text',
    });
    const res = await call<SavedTemplate>('PUT', `/api/v1/templates/${created.id}`, {
      token: account.mailKey,
      body: { name: 'New', subject: 'New subject {{x}}' },
    });
    expect(res.status).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toMatchObject({
      id: created.id,
      name: 'New',
      subject: 'New subject {{x}}',
      htmlBody: '<p>old html</p>',
      textBody: 'old text',
    });
    expect(res.json.data.updatedAt).toMatch(ISO_MS);
    expect(res.json.data.updatedAt >= created.updatedAt).toBe(true);

    const got = await getTemplate(account.mailKey, created.id);
    expect(got.json.data).toEqual({
      id: created.id,
      name: 'New',
      subject: 'New subject {{x}}',
      htmlBody: '<p>old html</p>',
      textBody: 'old text',
    });
  });

  it('may clear one body while the other remains', async () => {
    const account = await newAccount();
    const created = await createTemplate(account.mailKey, { htmlBody: '<p>html</p>', textBody: 'text' });
    const res = await call<SavedTemplate>('PUT', `/api/v1/templates/${created.id}`, {
      token: account.mailKey,
      body: { textBody: '' },
    });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ htmlBody: '<p>html</p>', textBody: '' });
    expect((await getTemplate(account.mailKey, created.id)).json.data.textBody).toBe('');
  });

  it('a template send after an update uses the new content', async () => {
    const account = await newAccount();
    const created = await createTemplate(account.mailKey, { subject: 'Before', textBody: 'before body' });
    const put = await call('PUT', `/api/v1/templates/${created.id}`, {
      token: account.mailKey,
      body: { subject: 'After {{who}}', textBody: 'after body {{who}}' },
    });
    expect(put.status).toBe(200);
    const to = uniqueAddress();
    const send = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to, templateId: created.id, vars: { who: 'Zoe' } },
    });
    expect(send.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.subject).toBe('After Zoe');
    expect(mail!.text).toContain('after body Zoe');
    expect(mail!.text).not.toContain('before body');
  });

  it('404 TEMPLATE_NOT_FOUND for an unknown id', async () => {
    const account = await newAccount();
    const res = await call('PUT', '/api/v1/templates/tpl_doesnotexist000000', {
      token: account.mailKey,
      body: { name: 'x' },
    });
    expectError(res, 404, 'TEMPLATE_NOT_FOUND');
  });

  it("404 TEMPLATE_NOT_FOUND for another account's template, which stays unchanged", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const created = await createTemplate(owner.mailKey, { name: 'Owned', subject: 'Owned subject' });
    const res = await call('PUT', `/api/v1/templates/${created.id}`, {
      token: stranger.mailKey,
      body: { name: 'Hijacked', subject: 'Hijacked' },
    });
    expectError(res, 404, 'TEMPLATE_NOT_FOUND');
    const got = await getTemplate(owner.mailKey, created.id);
    expect(got.json.data).toMatchObject({ name: 'Owned', subject: 'Owned subject' });
  });

  it('400 INVALID_INPUT when clearing both bodies; the template stays unchanged', async () => {
    const account = await newAccount();
    const created = await createTemplate(account.mailKey, { htmlBody: '<p>h</p>', textBody: 't' });
    const res = await call('PUT', `/api/v1/templates/${created.id}`, {
      token: account.mailKey,
      body: { htmlBody: '', textBody: '' },
    });
    expectError(res, 400, 'INVALID_INPUT');
    const got = await getTemplate(account.mailKey, created.id);
    expect(got.json.data).toMatchObject({ htmlBody: '<p>h</p>', textBody: 't' });
  });

  it('400 INVALID_INPUT when clearing the only remaining body', async () => {
    const account = await newAccount();
    const created = await createTemplate(account.mailKey, { htmlBody: '<p>only html</p>' });
    const res = await call('PUT', `/api/v1/templates/${created.id}`, {
      token: account.mailKey,
      body: { htmlBody: '' },
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect((await getTemplate(account.mailKey, created.id)).json.data.htmlBody).toBe('<p>only html</p>');
  });

  const invalidChanges: [string, unknown][] = [
    ['an empty change', {}],
    ['an empty name', { name: '' }],
    ['a subject with CR/LF', { subject: 'a\nb' }],
    ['an unknown field', { owner: 'x' }],
  ];
  for (const [what, body] of invalidChanges) {
    it(`400 INVALID_INPUT for ${what}`, async () => {
      const account = await newAccount();
      const created = await createTemplate(account.mailKey, { name: 'Stable', subject: 'Stable subject' });
      const res = await call('PUT', `/api/v1/templates/${created.id}`, { token: account.mailKey, body });
      expectError(res, 400, 'INVALID_INPUT');
      expect((await getTemplate(account.mailKey, created.id)).json.data).toMatchObject({
        name: 'Stable',
        subject: 'Stable subject',
      });
    });
  }

  it('400 INVALID_INPUT for an id shorter than 3 characters', async () => {
    const account = await newAccount();
    expectError(
      await call('PUT', '/api/v1/templates/ab', { token: account.mailKey, body: { name: 'x' } }),
      400,
      'INVALID_INPUT',
    );
  });
});

describe('DELETE /api/v1/templates/{templateId}', () => {
  it('deletes the template: gone from get, list and send', async () => {
    const account = await newAccount();
    const keep = await createTemplate(account.mailKey, { name: 'keep' });
    const doomed = await createTemplate(account.mailKey, { name: 'doomed' });
    const res = await call<TemplateDeleted>('DELETE', `/api/v1/templates/${doomed.id}`, { token: account.mailKey });
    expect(res.status).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data.id).toBe(doomed.id);

    expectError(await getTemplate(account.mailKey, doomed.id), 404, 'TEMPLATE_NOT_FOUND');
    const list = await call<TemplateList>('GET', '/api/v1/templates', { token: account.mailKey });
    expect(list.json.data.total).toBe(1);
    expect(list.json.data.items.map((t) => t.id)).toEqual([keep.id]);
    const send = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to: uniqueAddress(), templateId: doomed.id, vars: { name: 'x' } },
    });
    expectError(send, 404, 'TEMPLATE_NOT_FOUND');
  });

  it('404 TEMPLATE_NOT_FOUND when deleting twice', async () => {
    const account = await newAccount();
    const created = await createTemplate(account.mailKey);
    expect((await call('DELETE', `/api/v1/templates/${created.id}`, { token: account.mailKey })).status).toBe(200);
    expectError(
      await call('DELETE', `/api/v1/templates/${created.id}`, { token: account.mailKey }),
      404,
      'TEMPLATE_NOT_FOUND',
    );
  });

  it('404 TEMPLATE_NOT_FOUND for an unknown id', async () => {
    const account = await newAccount();
    expectError(
      await call('DELETE', '/api/v1/templates/tpl_doesnotexist000000', { token: account.mailKey }),
      404,
      'TEMPLATE_NOT_FOUND',
    );
  });

  it("404 TEMPLATE_NOT_FOUND for another account's template, which survives", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const created = await createTemplate(owner.mailKey);
    expectError(
      await call('DELETE', `/api/v1/templates/${created.id}`, { token: stranger.mailKey }),
      404,
      'TEMPLATE_NOT_FOUND',
    );
    expect((await getTemplate(owner.mailKey, created.id)).status).toBe(200);
  });

  it('400 INVALID_INPUT for an id longer than 128 characters', async () => {
    const account = await newAccount();
    expectError(
      await call('DELETE', `/api/v1/templates/${'t'.repeat(129)}`, { token: account.mailKey }),
      400,
      'INVALID_INPUT',
    );
  });
});
