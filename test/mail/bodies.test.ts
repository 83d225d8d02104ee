// Bodies: kept in the account's object when the email is accepted (never in its row), moved to R2 by the object's
// alarm right after the answer, read back when it is sent, and a body that R2 lost fails its email instead of
// sending it empty.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bodyKeyOf } from '../../src/mail/bodies';
import { accountStore } from '../../src/store/account/client';
import { accountDb } from '../support/account-db';
import { admin, call, eventually, expectError, inbox, newAccount, uniqueAddress, waitForInbox } from '../support/api';
import { runBatch, storedEmail } from '../support/delivery';
import type { QueuedEmail } from '../support/responses';
import { createTemplate } from '../support/templates';

/** The email's row holds no body: its columns (in the account's database), which name none. */
const columns = async (accountId: string) =>
  (
    await accountDb(accountId).prepare("SELECT name FROM pragma_table_info('emails')").all<{ name: string }>()
  ).results.map((c) => c.name);

const storedBody = async (id: string) => (await env.BODIES.get(bodyKeyOf(id)))?.json();

const keptInObject = async (accountId: string) =>
  (await accountDb(accountId).prepare('SELECT COUNT(*) AS n FROM email_bodies').first<{ n: number }>())!.n;

describe('email bodies', () => {
  it('POST /api/v1/emails keeps the body in its object, then in R2 under the email id; the row only names it', async () => {
    const { accountId, mailKey } = await newAccount();
    const to = uniqueAddress('body');
    const html = `<p>${'Thanks for your order. '.repeat(1000)}</p>`;
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 'A long body', html, text: 'plain' },
    });
    expect(res.status).toBe(200);
    const id = res.json.data.id;
    expect(await columns(accountId)).toContain('subject');
    expect(await columns(accountId)).not.toEqual(expect.arrayContaining(['html']));
    expect(await columns(accountId)).not.toEqual(expect.arrayContaining(['text']));
    // The answer waited for the account's object only; its alarm moves the body to R2 right after.
    await eventually(async () => ((await storedBody(id)) ? true : undefined), 'the body in R2');
    expect(await storedBody(id)).toEqual({ html, text: 'plain' });
    expect(await keptInObject(accountId)).toBe(0);
    const [mail] = await waitForInbox(to);
    expect(mail!.html).toContain('Thanks for your order.');
    expect(mail!.text).toContain('plain');
  });

  it('a body the object still keeps is sent from there (the claim carries it), and the detail shows it', async () => {
    const { accountId, mailKey } = await newAccount();
    const to = uniqueAddress('kept-body');
    const id = await storedEmail(accountId, to);
    await env.BODIES.delete(bodyKeyOf(id));
    const kept = JSON.stringify({ html: '<p>kept here</p>', text: 'kept here' });
    await accountDb(accountId).prepare('INSERT INTO email_bodies (email_id, body) VALUES (?, ?)').bind(id, kept).run();
    const detail = await call<{ html: string | null; text: string | null }>('GET', `/api/v1/emails/${id}`, {
      token: mailKey,
    });
    expect(detail.json.data).toMatchObject({ html: '<p>kept here</p>', text: 'kept here' });
    await runBatch([id]);
    const [mail] = await waitForInbox(to);
    expect(mail!.text).toContain('kept here');
  });

  it('a batch whose bodies are too large for one call to the object puts them in R2 before the answer', async () => {
    const { accountId, mailKey } = await newAccount();
    const html = `<p>${'A long newsletter line. '.repeat(16_000)}</p>`; // about 370 KB
    const template = await createTemplate(mailKey, { name: 'big', subject: 'Big', htmlBody: html });
    const to = uniqueAddress('big-batch');
    const res = await call<QueuedEmail[]>('POST', '/api/v1/emails/batch', {
      token: mailKey,
      body: { emails: Array.from({ length: 12 }, () => ({ to, subject: 'Big', templateId: template.id })) },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const ids = res.json.data.map((e) => e.id);
    // In R2 at once, none kept in the object.
    for (const id of ids) expect(await env.BODIES.head(bodyKeyOf(id))).not.toBeNull();
    expect(await keptInObject(accountId)).toBe(0);
    const mails = await waitForInbox(to, 12);
    expect(mails[0]!.html).toContain('A long newsletter line.');
  });

  it('a request refused after its body was stored leaves no body behind', async () => {
    const { mailKey } = await newAccount();
    const before = (await env.BODIES.list()).objects.length;
    await admin('PUT', '/admin/v1/settings', { dailyAllowance: 0 });
    try {
      const res = await call('POST', '/api/v1/emails', {
        token: mailKey,
        body: { to: uniqueAddress('refused'), subject: 'No room', text: 'hi' },
      });
      expectError(res, 429, 'DAILY_LIMIT_REACHED');
    } finally {
      await admin('PUT', '/admin/v1/settings', { dailyAllowance: null });
    }
    expect((await env.BODIES.list()).objects.length).toBe(before);
  });

  it('a body missing from R2 fails its email at once with 554, and nothing is sent', async () => {
    const { accountId } = await newAccount();
    const to = uniqueAddress('lost-body');
    const id = await storedEmail(accountId, to);
    await env.BODIES.delete(bodyKeyOf(id));
    const result = await runBatch([id]);
    expect(result.retryMessages).toEqual([]);
    const email = await accountStore(env, accountId).findEmail(id);
    expect(email).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(email!.lastReply).toMatch(/^554 5\.3\.0 .*missing from storage/);
    expect(await inbox(to)).toHaveLength(0);
  });
});
