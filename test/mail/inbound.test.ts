// The email() handler's matching: a bounce whose return path lost its token, complaints that name several
// recipients or none (redacted by the provider), and a report that names someone the email never went to.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { returnPathAddress } from '../../src/mail/return-path';
import { accountStore } from '../../src/store/account/client';
import { call, newAccount, uniqueAddress } from '../support/api';
import { runBatch, storedEmail } from '../support/delivery';
import { abuseReport, inboundMessage, postfixBounce, type ReportFixture } from '../support/reports';
import type { EmailDetail, SuppressionList } from '../support/responses';

const RETURN_PATH_DOMAIN = 'pc-bounces.example.com';

async function receive(fixture: ReportFixture) {
  const { message, state } = inboundMessage(fixture);
  await worker.email(message, env);
  return state;
}

async function sentEmail(to: string[]) {
  const account = await newAccount();
  const id = await storedEmail(account.accountId, to);
  await runBatch([id]);
  expect(await accountStore(env, account.accountId).findEmail(id)).toMatchObject({ status: 'SENT' });
  return { ...account, id, messageId: `<${id}@postcode.dev>` };
}

const detailOf = async (mailKey: string, id: string) =>
  (await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey })).json.data;
const statuses = async (mailKey: string, id: string) => (await detailOf(mailKey, id)).recipients.map((r) => r.status);

describe('email(): a bounce whose return path lost its token', () => {
  it('at bare bounces@, the returned Message-ID names the email', async () => {
    const to = uniqueAddress('tokenless');
    const sent = await sentEmail([to]);
    const state = await receive(
      postfixBounce({ to: `bounces@${RETURN_PATH_DOMAIN}`, recipient: to, messageId: sent.messageId }),
    );
    expect(state.rejected).toBeNull();
    expect(await statuses(sent.mailKey, sent.id)).toEqual(['BOUNCED']);
  });

  it('without a Message-ID of ours it changes nothing; any other local part is still refused', async () => {
    const to = uniqueAddress('tokenless');
    const sent = await sentEmail([to]);
    const bare = await receive(
      postfixBounce({ to: `bounces@${RETURN_PATH_DOMAIN}`, recipient: to, messageId: '<x@elsewhere.example>' }),
    );
    expect(bare.rejected).toBeNull();
    const other = await receive(postfixBounce({ to: `bouncer@${RETURN_PATH_DOMAIN}`, recipient: to }));
    expect(other.rejected).toMatch(/No such mailbox/);
    expect(await statuses(sent.mailKey, sent.id)).toEqual(['SENT']);
  });

  it('a bounce naming an address the email never went to changes nobody', async () => {
    const to = uniqueAddress('named');
    const sent = await sentEmail([to]);
    const rp = await returnPathAddress(env.DKIM_KEY_SECRET, sent.id, RETURN_PATH_DOMAIN);
    await receive(postfixBounce({ to: rp, recipient: uniqueAddress('stranger') }));
    expect(await statuses(sent.mailKey, sent.id)).toEqual(['SENT']);
  });
});

describe('email(): complaints', () => {
  const fbl = `fbl@${RETURN_PATH_DOMAIN}`;

  it('every Original-Rcpt-To of a report is complained, and suppressed', async () => {
    const [a, b, c] = [uniqueAddress('a'), uniqueAddress('b'), uniqueAddress('c')];
    const sent = await sentEmail([a, b, c]);
    const report = abuseReport({ to: fbl, recipient: a, messageId: sent.messageId });
    await receive({
      ...report,
      raw: report.raw.replace(/(Original-Rcpt-To: .*\r\n)/, `$1Original-Rcpt-To: <${b}>\r\n`),
    });
    expect(await statuses(sent.mailKey, sent.id)).toEqual(['COMPLAINED', 'COMPLAINED', 'SENT']);
    const list = await call<SuppressionList>('GET', '/api/v1/suppressions', { token: sent.mailKey });
    expect(list.json.data.suppressions.map((s) => s.email).sort()).toEqual([a, b].sort());
  });

  it('a redacted report is the only recipient’s complaint', async () => {
    const to = uniqueAddress('only');
    const sent = await sentEmail([to]);
    await receive(abuseReport({ to: fbl, recipient: 'redacted@example.net', messageId: sent.messageId }));
    expect(await statuses(sent.mailKey, sent.id)).toEqual(['COMPLAINED']);
  });

  it('with several recipients, a redacted report marks the email and guesses no address', async () => {
    const [a, b] = [uniqueAddress('a'), uniqueAddress('b')];
    const sent = await sentEmail([a, b]);
    await receive(abuseReport({ to: fbl, recipient: 'redacted', messageId: sent.messageId }));
    const detail = await detailOf(sent.mailKey, sent.id);
    expect(detail.recipients.map((r) => r.status)).toEqual(['SENT', 'SENT']);
    expect(detail.events.at(-1)).toMatchObject({ type: 'complained', detail: expect.stringMatching(/names none/) });
  });
});
