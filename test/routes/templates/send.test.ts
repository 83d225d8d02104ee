// Sending from a template (route 3, POST /api/v1/templates/send) and the account health-check email
// (route 4, POST /api/v1/templates/send-test). Template CRUD is in templates.test.ts.
import { describe, expect, it } from 'vitest';
import {
  call,
  expectError,
  inbox,
  newAccount,
  sendLogTotal,
  uniqueAddress,
  waitForInbox,
  waitForStatus,
} from '../../support/api';
import type { QueuedEmail, TemplateQueued } from '../../support/responses';
import { createTemplate } from '../../support/templates';

describe('POST /api/v1/templates/send', () => {
  it('queues the email and delivers it with the variables filled', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, {
      subject: 'Order {{ orderNo }} for {{name}}',
      htmlBody: '<p>Dear {{name}}, you bought {{count}} items.</p>',
      textBody: 'Dear {{ name }}, you bought {{count}} items.',
    });
    const to = uniqueAddress();
    const res = await call<TemplateQueued>('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to, templateId: template.id, vars: { name: 'Ann', orderNo: 'A-17', count: 3 } },
    });
    expect(res.status).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toEqual({ id: expect.any(String), status: 'QUEUED', templateId: template.id });
    expect(res.json.data.id).toMatch(/^em_/);

    const mails = await waitForInbox(to);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.envelopeTo).toEqual([to]);
    expect(mail.subject).toBe('Order A-17 for Ann');
    expect(mail.html).toContain('<p>Dear Ann, you bought 3 items.</p>');
    expect(mail.text).toContain('Dear Ann, you bought 3 items.');
    expect(mail.text).not.toContain('{{');
    expect(mail.html).not.toContain('{{');

    const entry = await waitForStatus(account.mailKey, res.json.data.id, 'SENT');
    expect(entry).toMatchObject({ subject: 'Order A-17 for Ann', toAddresses: [to], status: 'SENT' });
  });

  it('HTML-escapes values in the html part but inserts them literally in text and subject', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, {
      subject: 'Hi {{name}}',
      htmlBody: '<p>Hi {{name}}</p>',
      textBody: 'Hi {{name}}',
    });
    const to = uniqueAddress();
    const name = '<script>alert(1)</script> & "Co"';
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to, templateId: template.id, vars: { name } },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.html).toContain('<p>Hi &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;</p>');
    expect(mail!.html).not.toContain('<script>');
    expect(mail!.text).toContain(`Hi ${name}`);
    expect(mail!.subject).toBe(`Hi ${name}`);
  });

  it('subject, html and text in the request override the template', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, {
      subject: 'Template subject {{name}}',
      htmlBody: '<p>Template html {{name}}</p>',
      textBody: 'Template text {{name}}',
    });
    const to = uniqueAddress();
    const res = await call<TemplateQueued>('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: {
        to,
        templateId: template.id,
        vars: { name: 'Bo' },
        subject: 'Override subject {{name}}',
        html: '<p>Override html {{name}}</p>',
        text: 'Override text {{name}}',
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.data.templateId).toBe(template.id);
    const [mail] = await waitForInbox(to);
    expect(mail!.subject).toBe('Override subject Bo');
    expect(mail!.html).toContain('<p>Override html Bo</p>');
    expect(mail!.html).not.toContain('Template html');
    expect(mail!.text).toContain('Override text Bo');
    expect(mail!.text).not.toContain('Template text');
  });

  it('a subject override alone keeps the template bodies', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, {
      subject: 'Template subject',
      htmlBody: '<p>Template html {{name}}</p>',
      textBody: 'Template text {{name}}',
    });
    const to = uniqueAddress();
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to, templateId: template.id, vars: { name: 'Cy' }, subject: 'Only the subject' },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.subject).toBe('Only the subject');
    expect(mail!.html).toContain('<p>Template html Cy</p>');
    expect(mail!.text).toContain('Template text Cy');
  });

  it('400 INVALID_INPUT naming the missing variable, and nothing is queued', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, {
      subject: 'Order {{orderNumber}}',
      htmlBody: '<p>Use {{couponCode}}</p>',
      textBody: 'Use {{couponCode}}',
    });
    const before = await sendLogTotal(account.mailKey);
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to: uniqueAddress(), templateId: template.id, vars: { orderNumber: '42' } },
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toContain('couponCode');
    expect(res.json.error.message).not.toContain('orderNumber');
    expect(await sendLogTotal(account.mailKey)).toBe(before);
  });

  it('400 INVALID_INPUT naming the template and the size when it would render past a message, unrendered', async () => {
    const account = await newAccount();
    // 4,000 placeholders and a 50 KB value: 200 MB rendered, from a 20 KB template and a 50 KB body.
    const template = await createTemplate(account.mailKey, { subject: 'Big', htmlBody: '{{x}}'.repeat(4000) });
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to: uniqueAddress(), templateId: template.id, vars: { x: 'y'.repeat(50_000) } },
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toBe(
      `templateId: template ${template.id} renders to 200000003 bytes with these vars, over the 524288 a message may carry`,
    );
    expect(await sendLogTotal(account.mailKey)).toBe(0);
  });

  it('400 INVALID_INPUT naming every missing variable when vars are absent', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, {
      subject: 'Order {{orderNumber}}',
      textBody: 'Use {{couponCode}}',
    });
    const before = await sendLogTotal(account.mailKey);
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to: uniqueAddress(), templateId: template.id },
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toContain('couponCode');
    expect(res.json.error.message).toContain('orderNumber');
    expect(await sendLogTotal(account.mailKey)).toBe(before);
  });

  it('400 INVALID_INPUT when a variable brings CR/LF into the subject, and nothing is queued', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, { subject: 'Hello {{name}}', textBody: 'Hi {{name}}' });
    const before = await sendLogTotal(account.mailKey);
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to: uniqueAddress(), templateId: template.id, vars: { name: 'Eve\r\nBcc: victim@example.com' } },
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toMatch(/subject/);
    expect(await sendLogTotal(account.mailKey)).toBe(before);
  });

  it('a variable with a line break in the text body only is accepted', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, { subject: 'Address', textBody: 'Ship to:\n{{address}}' });
    const to = uniqueAddress();
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to, templateId: template.id, vars: { address: '1 Main St\nSpringfield' } },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.subject).toBe('Address');
    expect(mail!.text).toContain('1 Main St\nSpringfield');
  });

  it('400 INVALID_INPUT naming templateId when it is missing', async () => {
    const account = await newAccount();
    const before = await sendLogTotal(account.mailKey);
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to: uniqueAddress(), vars: { name: 'x' } },
    });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toMatch(/templateId/);
    expect(await sendLogTotal(account.mailKey)).toBe(before);
  });

  const invalidPayloads: [string, (templateId: string) => unknown, RegExp][] = [
    ['to is missing', (templateId) => ({ templateId, vars: { name: 'x' } }), /to/],
    ['to is not an address', (templateId) => ({ to: 'not-an-address', templateId, vars: { name: 'x' } }), /to/],
    ['templateId is too short', () => ({ to: uniqueAddress(), templateId: 'ab', vars: { name: 'x' } }), /templateId/],
    [
      'priority is unknown',
      (templateId) => ({ to: uniqueAddress(), templateId, vars: { name: 'x' }, priority: 'HIGH' }),
      /priority/,
    ],
    [
      'a var value is nested',
      (templateId) => ({ to: uniqueAddress(), templateId, vars: { name: { first: 'x' } } }),
      /vars/,
    ],
    [
      'the subject override has a line break',
      (templateId) => ({ to: uniqueAddress(), templateId, vars: { name: 'x' }, subject: 'a\r\nb' }),
      /subject/,
    ],
  ];
  for (const [what, body, field] of invalidPayloads) {
    it(`400 INVALID_INPUT when ${what}`, async () => {
      const account = await newAccount();
      const template = await createTemplate(account.mailKey);
      const before = await sendLogTotal(account.mailKey);
      const res = await call('POST', '/api/v1/templates/send', { token: account.mailKey, body: body(template.id) });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toMatch(field);
      expect(await sendLogTotal(account.mailKey)).toBe(before);
    });
  }

  it('404 TEMPLATE_NOT_FOUND for an unknown template', async () => {
    const account = await newAccount();
    const before = await sendLogTotal(account.mailKey);
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to: uniqueAddress(), templateId: 'tpl_doesnotexist000000' },
    });
    expectError(res, 404, 'TEMPLATE_NOT_FOUND');
    expect(await sendLogTotal(account.mailKey)).toBe(before);
  });

  it("404 TEMPLATE_NOT_FOUND for another account's template, and nothing is queued", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const template = await createTemplate(owner.mailKey);
    const res = await call('POST', '/api/v1/templates/send', {
      token: stranger.mailKey,
      body: { to: uniqueAddress(), templateId: template.id, vars: { name: 'x' } },
    });
    expectError(res, 404, 'TEMPLATE_NOT_FOUND');
    expect(await sendLogTotal(stranger.mailKey)).toBe(0);
    expect(await sendLogTotal(owner.mailKey)).toBe(0);
  });

  it("403 SENDER_NOT_VERIFIED with another account's senderEmailId, and nothing is queued", async () => {
    const account = await newAccount();
    const other = await newAccount();
    const template = await createTemplate(account.mailKey);
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to: uniqueAddress(), templateId: template.id, vars: { name: 'x' }, senderEmailId: other.senderId },
    });
    expectError(res, 403, 'SENDER_NOT_VERIFIED');
    expect(await sendLogTotal(account.mailKey)).toBe(0);
  });

  it('403 SENDER_NOT_VERIFIED with an unknown senderEmailId', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey);
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: {
        to: uniqueAddress(),
        templateId: template.id,
        vars: { name: 'x' },
        senderEmailId: 'snd_doesnotexist000000',
      },
    });
    expectError(res, 403, 'SENDER_NOT_VERIFIED');
  });

  it('with its own verified sender, the mail comes from the sender address', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey);
    const to = uniqueAddress();
    const res = await call<TemplateQueued>('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to, templateId: template.id, vars: { name: 'Di' }, senderEmailId: account.senderId },
    });
    expect(res.status).toBe(200);
    expect(res.json.data.status).toBe('QUEUED');
    const [mail] = await waitForInbox(to);
    expect(mail!.from).toContain(account.senderEmail);
    expect(mail!.from).toContain('Sender Name');
    expect(mail!.envelopeFrom).toBe(account.senderEmail);
  });

  it('without senderEmailId, the mail does not come from any account sender', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey);
    const to = uniqueAddress();
    const res = await call('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to, templateId: template.id, vars: { name: 'Di' } },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.from).not.toContain(account.senderEmail);
    expect(mail!.from).toMatch(/@/);
  });

  it('a recipient the SMTP server rejects with 550 ends FAILED and receives nothing', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey);
    const to = uniqueAddress('reject550');
    const res = await call<TemplateQueued>('POST', '/api/v1/templates/send', {
      token: account.mailKey,
      body: { to, templateId: template.id, vars: { name: 'x' } },
    });
    expect(res.status).toBe(200);
    expect(res.json.data.status).toBe('QUEUED');
    const entry = await waitForStatus(account.mailKey, res.json.data.id, 'FAILED');
    expect(entry.toAddresses).toEqual([to]);
    expect(await inbox(to)).toEqual([]);
  });
});

describe('POST /api/v1/templates/send-test', () => {
  it('queues the fixed test message, which arrives', async () => {
    const accountName = `Health ${crypto.randomUUID().slice(0, 8)}`;
    const account = await newAccount(accountName);
    const to = uniqueAddress();
    const res = await call<QueuedEmail>('POST', '/api/v1/templates/send-test', {
      token: account.mailKey,
      body: { to },
    });
    expect(res.status).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toMatchObject({ id: expect.stringMatching(/^em_/), status: 'QUEUED' });

    const mails = await waitForInbox(to);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.subject).toBe('postcode test email');
    expect(mail.text).toContain(accountName);
    expect(mail.html).toContain(accountName);
    expect(mail.text).not.toContain('{{');
    expect(mail.html).not.toContain('{{');

    const entry = await waitForStatus(account.mailKey, res.json.data.id, 'SENT');
    expect(entry).toMatchObject({ subject: 'postcode test email', toAddresses: [to] });
  });

  it('HTML-escapes the account name in the html part', async () => {
    const account = await newAccount('Acme <b>&</b> Co');
    const to = uniqueAddress();
    const res = await call('POST', '/api/v1/templates/send-test', { token: account.mailKey, body: { to } });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.html).toContain('Acme &lt;b&gt;&amp;&lt;/b&gt; Co');
    expect(mail!.html).not.toContain('<b>&</b>');
    expect(mail!.text).toContain('Acme <b>&</b> Co');
  });

  it('with its own verified sender, the test mail comes from the sender address', async () => {
    const account = await newAccount();
    const to = uniqueAddress();
    const res = await call('POST', '/api/v1/templates/send-test', {
      token: account.mailKey,
      body: { to, senderEmailId: account.senderId },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    expect(mail!.from).toContain(account.senderEmail);
  });

  it('400 INVALID_INPUT naming `to` when the recipient is missing, and nothing is queued', async () => {
    const account = await newAccount();
    const res = await call('POST', '/api/v1/templates/send-test', { token: account.mailKey, body: {} });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toMatch(/^to\b/);
    expect(await sendLogTotal(account.mailKey)).toBe(0);
  });

  it('400 INVALID_INPUT for an invalid recipient or an empty list', async () => {
    const account = await newAccount();
    expectError(
      await call('POST', '/api/v1/templates/send-test', { token: account.mailKey, body: { to: 'nobody' } }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await call('POST', '/api/v1/templates/send-test', { token: account.mailKey, body: { to: [] } }),
      400,
      'INVALID_INPUT',
    );
    expect(await sendLogTotal(account.mailKey)).toBe(0);
  });

  it("403 SENDER_NOT_VERIFIED with another account's senderEmailId, and nothing is queued", async () => {
    const account = await newAccount();
    const other = await newAccount();
    const res = await call('POST', '/api/v1/templates/send-test', {
      token: account.mailKey,
      body: { to: uniqueAddress(), senderEmailId: other.senderId },
    });
    expectError(res, 403, 'SENDER_NOT_VERIFIED');
    expect(await sendLogTotal(account.mailKey)).toBe(0);
  });
});
