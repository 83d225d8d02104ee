// OTP mail from an account's saved template (`templateId` on the send routes): the OTP placeholders filled,
// a template that cannot make an OTP mail refused, resends and queue retries from the same template, and the
// code never kept or logged anywhere.

import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { accountDb } from '../../support/account-db';
import { admin, call, expectError, newAccount, sendLogTotal, uniqueAddress, waitForInbox } from '../../support/api';
import { runJobs } from '../../support/delivery';
import { sessionStub } from '../../support/otp';
import type { OtpSent } from '../../support/responses';
import { createTemplate } from '../../support/templates';

const BACKEND = '/api/v1/backend-otp';
const VERIFICATION = '/api/v1/email-verification';

const OTP_TEMPLATE = {
  subject: '{{productName}} sign-in code',
  htmlBody: '<h1>{{productName}}</h1><p>Your code: <b>{{code}}</b> ({{expiresInMinutes}} min)</p>',
  textBody: 'Code for {{productName}}:\n{{code}}\nValid for {{expiresInMinutes}} minutes.',
};

const send = (base: string, token: string, body: Record<string, unknown>) =>
  call<OtpSent>('POST', `${base}/send`, { token, body });

/** The code line (digits only) of the newest of at least `count` mails to `email`, and that mail. */
async function mailedCode(email: string, count = 1) {
  const mails = await waitForInbox(email, count);
  const mail = mails[mails.length - 1]!;
  const code = mail.text.split(/\r?\n/).find((line) => /^\d{6}$/.test(line.trim()));
  expect(code, mail.text).toBeDefined();
  return { code: code!.trim(), mail };
}

describe('OTP mail from a template (templateId)', () => {
  it('fills code, expiresInMinutes and productName (the account name when not branded); the code verifies', async () => {
    const account = await newAccount('Acme Inc');
    const template = await createTemplate(account.mailKey, OTP_TEMPLATE);
    const email = uniqueAddress('tpl');
    const res = await send(BACKEND, account.serverKey, { email, templateId: template.id, expiresInSeconds: 300 });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const { code, mail } = await mailedCode(email);
    expect(mail.subject).toBe('Acme Inc sign-in code');
    expect(mail.text).toBe(`Code for Acme Inc:\n${code}\nValid for 5 minutes.`);
    expect(mail.html).toContain(`<h1>Acme Inc</h1><p>Your code: <b>${code}</b> (5 min)</p>`);
    const verified = await call('POST', `${BACKEND}/verify`, {
      token: account.serverKey,
      body: { sessionId: res.json.data.sessionId, email, code },
    });
    expect(verified.status, JSON.stringify(verified.json)).toBe(200);
  });

  it('uses the branded product name', async () => {
    const account = await newAccount('Acme Inc');
    await admin('PUT', `/admin/v1/accounts/${account.accountId}/otp-branding`, { productName: 'Acme <Cloud>' });
    const template = await createTemplate(account.mailKey, OTP_TEMPLATE);
    const email = uniqueAddress('tpl-brand');
    expect((await send(BACKEND, account.serverKey, { email, templateId: template.id })).status).toBe(200);
    const { mail } = await mailedCode(email);
    expect(mail.subject).toBe('Acme <Cloud> sign-in code');
    expect(mail.html).toContain('<h1>Acme &lt;Cloud&gt;</h1>');
  });

  it('fills {{magicLink}} in email verification mail, and the link verifies after one press', async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, {
      subject: 'Confirm your address',
      textBody: 'Code: {{code}}\n{{magicLink}}',
      htmlBody: '<p>{{code}}</p><a href="{{magicLink}}">Confirm</a>',
    });
    const email = uniqueAddress('tpl-link');
    const res = await send(VERIFICATION, account.serverKey, { email, templateId: template.id });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const [mail] = await waitForInbox(email);
    const link = new URL(mail!.text.split('\n')[1]!.trim());
    expect(link.pathname).toBe('/verify');
    // In HTML the link's & is escaped as an attribute needs.
    expect(mail!.html).toContain(`href="${link.toString().replaceAll('&', '&amp;')}"`);
    const token = link.searchParams.get('token')!;
    const pressed = await call('POST', '/verify', {
      rawBody: new URLSearchParams({ sessionId: res.json.data.sessionId, token }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    });
    expect(JSON.parse(pressed.text)).toMatchObject({ state: 'verified' });
  });

  it('refuses templates that cannot make an OTP mail (400) and unknown or foreign ones (404)', async () => {
    const account = await newAccount();
    const token = account.serverKey;
    const email = uniqueAddress('tpl-bad');
    const noCode = await createTemplate(account.mailKey, { subject: 'Hi', textBody: 'no code here' });
    const codeInSubjectOnly = await createTemplate(account.mailKey, {
      subject: 'Code {{code}}',
      textBody: 'see subject',
    });
    const otherVar = await createTemplate(account.mailKey, { subject: 'Hi {{name}}', textBody: '{{code}}' });
    const link = await createTemplate(account.mailKey, { subject: 'Hi', textBody: '{{code}} {{magicLink}}' });
    for (const [templateId, says] of [
      [noCode.id, 'no {{code}}'],
      [codeInSubjectOnly.id, 'no {{code}}'],
      [otherVar.id, '{{name}}'],
      [link.id, '{{magicLink}}'],
    ] as const) {
      const res = await send(BACKEND, token, { email, templateId });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toMatch(/^templateId: /);
      expect(res.json.error.message).toContain(says);
    }
    expectError(await send(BACKEND, token, { email, templateId: 'tpl_unknown00000000' }), 404, 'TEMPLATE_NOT_FOUND');
    const foreign = await createTemplate((await newAccount()).mailKey, OTP_TEMPLATE);
    expectError(await send(BACKEND, token, { email, templateId: foreign.id }), 404, 'TEMPLATE_NOT_FOUND');
    const withSubject = await send(BACKEND, token, { email, templateId: foreign.id, subject: 'x' });
    expectError(withSubject, 400, 'INVALID_INPUT');
    expect(withSubject.json.error.message).toMatch(/^templateId: /);
    // Nothing was mailed for any of these.
    expect(await waitForInbox(email, 0)).toEqual([]);
  });

  it('refuses (400, naming the template and the size) a template the mail would fill past a message', async () => {
    const account = await newAccount();
    // 2,000 {{productName}} and a product name HTML-escaping makes 500 bytes: a megabyte of HTML.
    await admin('PUT', `/admin/v1/accounts/${account.accountId}/otp-branding`, { productName: '&'.repeat(100) });
    const template = await createTemplate(account.mailKey, {
      subject: 'Code',
      htmlBody: `<p>{{code}}</p>${'{{productName}}'.repeat(2000)}`,
      textBody: '{{code}}',
    });
    const email = uniqueAddress('tpl-big');
    const res = await send(BACKEND, account.serverKey, { email, templateId: template.id });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.json.error.message).toBe(
      `templateId: template ${template.id} renders to 1000023 bytes with these vars, over the 524288 a message may carry`,
    );
    expect(await waitForInbox(email, 0)).toEqual([]);
  });

  it('works on the public flavours too (instant OTP and its legacy alias)', async () => {
    const account = await newAccount('Public Co');
    const template = await createTemplate(account.mailKey, OTP_TEMPLATE);
    for (const base of ['/api/v1/instant-otp', '/api/v1/otp']) {
      const email = uniqueAddress('tpl-public');
      const res = await send(base, account.publicToken, { email, templateId: template.id });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect((await mailedCode(email)).mail.subject).toBe('Public Co sign-in code');
    }
  });

  it('a resend comes from the same template with a fresh code; once the template is deleted, the built-in mail', async () => {
    const account = await newAccount('Acme Inc');
    const template = await createTemplate(account.mailKey, OTP_TEMPLATE);
    const email = uniqueAddress('tpl-resend');
    const sent = await send(BACKEND, account.serverKey, { email, templateId: template.id });
    const first = await mailedCode(email);
    const resend = () =>
      call('POST', `${BACKEND}/resend`, {
        token: account.serverKey,
        body: { sessionId: sent.json.data.sessionId, email },
      });
    expect((await resend()).status).toBe(200);
    const second = await mailedCode(email, 2);
    expect(second.mail.subject).toBe('Acme Inc sign-in code');
    expect(second.code).not.toBe(first.code);
    expect((await call('DELETE', `/api/v1/templates/${template.id}`, { token: account.mailKey })).status).toBe(200);
    expect((await resend()).status).toBe(200);
    const third = await mailedCode(email, 3);
    expect(third.mail.subject).toBe('Your verification code');
    expect(third.mail.text).toContain('Use this code to continue:');
  });

  it('a queue retry of a templated mail comes from the template', async () => {
    const account = await newAccount('Retry Co');
    const template = await createTemplate(account.mailKey, OTP_TEMPLATE);
    const email = uniqueAddress('tpl-retry');
    const sent = await send(BACKEND, account.serverKey, { email, templateId: template.id });
    await mailedCode(email);
    const job = {
      kind: 'otp-retry' as const,
      sessionId: sent.json.data.sessionId,
      accountId: account.accountId,
      channel: 'backend' as const,
      email,
      subject: 'Your verification code',
      digits: 6,
      expiresAt: Date.parse(sent.json.data.expiresAt),
      from: { email: 'no-reply@postcode.dev', name: 'postcode' },
      templateId: template.id,
    };
    expect((await runJobs([job])).explicitAcks).toEqual(['msg-0-otp-retry']);
    const retried = await mailedCode(email, 2);
    expect(retried.mail.subject).toBe('Retry Co sign-in code');
  });

  it("keeps the code nowhere: not in the send log, not in the account's tables, not in the session object (only its HMAC)", async () => {
    const account = await newAccount();
    const template = await createTemplate(account.mailKey, OTP_TEMPLATE);
    const email = uniqueAddress('tpl-secret');
    const sent = await send(BACKEND, account.serverKey, { email, templateId: template.id });
    const { code } = await mailedCode(email);
    expect(await sendLogTotal(account.mailKey)).toBe(0);
    for (const table of ['emails', 'email_events', 'otp_verifications', 'events']) {
      const rows = await accountDb(account.accountId)
        .prepare(`SELECT * FROM ${table}`)
        .all()
        .catch(() => ({ results: [] }));
      expect(JSON.stringify(rows.results)).not.toContain(code);
    }
    const stored = await runInDurableObject(sessionStub(sent.json.data.sessionId), (_instance, state) => {
      const tables = state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf%'")
        .toArray();
      return tables
        .map(({ name }) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM "${name}"`).toArray()))
        .join();
    });
    expect(stored).toContain(template.id);
    expect(stored).not.toContain(code);
  });
});
