// Bodies in R2: stored when the email is accepted (never in its row), read back when it is sent, moved out
// of rows stored before, and a body that R2 lost fails its email instead of sending it empty.
import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { findEmail } from '../../src/db/emails';
import worker from '../../src/index';
import { bodyKeyOf, INLINE_BODY_BATCH } from '../../src/mail/bodies';
import { admin, call, expectError, inbox, newAccount, uniqueAddress, waitForInbox } from '../support/api';
import { runBatch, storedEmail } from '../support/delivery';
import type { QueuedEmail } from '../support/responses';

const row = (id: string) =>
  env.DB.prepare('SELECT html, text, body_key FROM emails WHERE id = ?')
    .bind(id)
    .first<{ html: string | null; text: string | null; body_key: string | null }>();

const storedBody = async (id: string) => (await env.BODIES.get(bodyKeyOf(id)))?.json();

/** An email as rows were stored before bodies lived in R2: html and text inline, no body key. */
async function inlineEmail(accountId: string, to: string, html: string, text: string) {
  const id = await storedEmail(accountId, to);
  await env.BODIES.delete(bodyKeyOf(id));
  await env.DB.prepare('UPDATE emails SET html = ?2, text = ?3, body_key = NULL WHERE id = ?1')
    .bind(id, html, text)
    .run();
  return id;
}

describe('email bodies in R2', () => {
  it('POST /api/v1/emails stores the body in R2 under the email id, and the row only names it', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('body');
    const html = `<p>${'Thanks for your order. '.repeat(1000)}</p>`;
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: mailKey,
      body: { to, subject: 'A long body', html, text: 'plain' },
    });
    expect(res.status).toBe(200);
    const id = res.json.data.id;
    expect(await row(id)).toEqual({ html: null, text: null, body_key: bodyKeyOf(id) });
    expect(await storedBody(id)).toEqual({ html, text: 'plain' });
    const [mail] = await waitForInbox(to);
    expect(mail!.html).toContain('Thanks for your order.');
    expect(mail!.text).toContain('plain');
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

  it('delivers a row whose body is still inline, and the scheduled run moves that body to R2', async () => {
    const { accountId } = await newAccount();
    const sentTo = uniqueAddress('inline-sent');
    const sent = await inlineEmail(accountId, sentTo, '<p>inline html</p>', 'inline text');
    expect((await runBatch([sent])).explicitAcks).toHaveLength(1);
    const [mail] = await inbox(sentTo);
    expect(mail!.html).toContain('inline html');

    const waiting = await inlineEmail(accountId, uniqueAddress('inline-waiting'), '<p>waiting</p>', 'waiting');
    await worker.scheduled(createScheduledController(), env);
    for (const id of [sent, waiting])
      expect(await row(id)).toEqual({ html: null, text: null, body_key: bodyKeyOf(id) });
    expect(await storedBody(waiting)).toEqual({ html: '<p>waiting</p>', text: 'waiting' });
    const to = (await findEmail(env.DB, waiting))!.toAddresses[0]!;
    await runBatch([waiting]);
    expect((await inbox(to))[0]!.text).toContain('waiting');
  });

  it(`moves at most ${INLINE_BODY_BATCH} inline bodies per run, oldest first; the next run takes the rest`, async () => {
    const { accountId } = await newAccount();
    const ids: string[] = [];
    for (let i = 0; i < INLINE_BODY_BATCH + 3; i++)
      ids.push(await inlineEmail(accountId, uniqueAddress('many'), 'h', 't'));
    const inline = () =>
      env.DB.prepare('SELECT COUNT(*) AS n FROM emails WHERE account_id = ? AND body_key IS NULL')
        .bind(accountId)
        .first<{ n: number }>();
    await worker.scheduled(createScheduledController(), env);
    expect((await inline())!.n).toBeLessThanOrEqual(3);
    await worker.scheduled(createScheduledController(), env);
    expect((await inline())!.n).toBe(0);
  });

  it('a body missing from R2 fails its email at once with 554, and nothing is sent', async () => {
    const { accountId } = await newAccount();
    const to = uniqueAddress('lost-body');
    const id = await storedEmail(accountId, to);
    await env.BODIES.delete(bodyKeyOf(id));
    const result = await runBatch([id]);
    expect(result.retryMessages).toEqual([]);
    const email = await findEmail(env.DB, id);
    expect(email).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(email!.lastReply).toMatch(/^554 5\.3\.0 .*missing from storage/);
    expect(await inbox(to)).toHaveLength(0);
  });
});
