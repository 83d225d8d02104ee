// The overview page: the metrics API's figures for the signed-in account, drawn and tabulated.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { accountStore } from '../../../src/store/account/client';
import { call, uniqueAddress, waitForStatus } from '../../support/api';
import { mailKey, signedInMember } from '../../support/dashboard';
import { bounce, runBatch, storedEmail } from '../../support/delivery';

async function sentMail(accountId: string, mode: 'live' | 'test') {
  const key = await mailKey(accountId, mode);
  const res = await call<{ id: string }>('POST', '/api/v1/emails', {
    token: key,
    body: { to: [uniqueAddress('o1'), uniqueAddress('o2')], subject: 'Overview', text: 'hi' },
  });
  expect(res.status).toBe(200);
  await waitForStatus(key, res.json.data.id, 'SENT');
}

const today = () => new Date().toISOString().slice(0, 10);

describe('GET /dashboard/overview', () => {
  it("shows the last 7 days of the account's live mail: stats, a chart with a tooltip per point, the numbers", async () => {
    const { browser, accountId } = await signedInMember('viewer');
    await sentMail(accountId, 'live');
    const page = await browser.get('/dashboard/overview');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<span class="label">Sent<\/span><span class="value">2<\/span>/);
    expect(page.text).toContain('<svg class="chart"');
    expect(page.text).toContain(`<title>${today().slice(5)}: 2 sent</title>`);
    expect(page.text.match(/<td data-label="Day">/g)).toHaveLength(7);
    expect(page.text).toContain(
      `<td data-label="Day">${today()}</td><td data-label="Queued">2</td><td data-label="Sent">2</td>`,
    );
    expect(page.text).toContain('Instant OTP');
  });

  it("shows the bounces that are the sender's problem apart, beside all bounces", async () => {
    const { browser, accountId } = await signedInMember('viewer');
    const to = [uniqueAddress('blocked'), uniqueAddress('full')];
    const id = await storedEmail(accountId, to);
    await runBatch([id]);
    for (const [recipient, bounceReason] of [
      [to[0]!, 'blocked'],
      [to[1]!, 'mailbox_full'],
    ] as const) {
      expect(await bounce(id, recipient, bounceReason)).toBe('applied');
    }
    const page = await browser.get('/dashboard/overview');
    expect(page.text).toMatch(/<span class="label">Bounced<\/span><span class="value">100.0 %<\/span>/);
    expect(page.text).toContain(
      '<span class="label">Sender-side</span><span class="value">1</span><span class="label">of 2 bounced</span>',
    );
    expect(page.text).toContain(`<td data-label="Bounced">2</td><td data-label="Sender-side">1</td>`);
  });

  it('counts refused code sends by reason beside sent and verified', async () => {
    const { browser, accountId } = await signedInMember('viewer');
    const store = accountStore(env, accountId);
    for (const reason of ['challenge_failed', 'challenge_failed', 'domain_capped'] as const) {
      await store.countOtpRefusal(accountId, 'instant', reason, Date.now());
    }
    await store.countOtpRefusal(accountId, 'backend', 'recipient_capped', Date.now());
    const page = await browser.get('/dashboard/overview');
    expect(page.text).toContain(
      '<td data-label="Refused: Bot check failed">2</td><td data-label="Refused: Recipient capped">0</td>' +
        '<td data-label="Refused: Domain capped">1</td><td data-label="Refused: Address refused">0</td>',
    );
    expect(page.text).toContain(
      '<td data-label="Refused: Bot check failed">0</td><td data-label="Refused: Recipient capped">1</td>',
    );
  });

  it('30 days, and test mail on its own', async () => {
    const { browser, accountId } = await signedInMember('viewer');
    await sentMail(accountId, 'test');
    const month = await browser.get('/dashboard/overview?days=30');
    expect(month.text.match(/<td data-label="Day">/g)).toHaveLength(30);
    expect(month.text).toMatch(/<span class="label">Sent<\/span><span class="value">0<\/span>/);
    const test = await browser.get('/dashboard/overview?mode=test');
    expect(test.text).toMatch(/<span class="label">Sent<\/span><span class="value">2<\/span>/);
    expect(test.text).toContain('Test mail');
  });

  it("another account's mail is not counted", async () => {
    const other = await signedInMember('owner');
    await sentMail(other.accountId, 'live');
    const { browser } = await signedInMember('viewer');
    expect((await browser.get('/dashboard/overview')).text).toMatch(
      /<span class="label">Sent<\/span><span class="value">0<\/span>/,
    );
  });
});
