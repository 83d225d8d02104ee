// Received mail in the dashboard: the list with its filters, one message's page (fields, thread, attachments to
// download, the HTML body framed under the preview policy), and the replies on the email's page.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../../src/index';
import { call, uniqueAddress } from '../../support/api';
import { mailKey, signedInMember } from '../../support/dashboard';
import { runBatch, storedEmail } from '../../support/delivery';
import {
  autoReplyMessage,
  HTML_ATTACHMENTS,
  htmlWithAttachments,
  inboundBytes,
  plainMessage,
  replyTo,
} from '../../support/inbound-mail';
import type { ReportFixture } from '../../support/reports';

/** A signed-in viewer of an account that stores whatever comes to its subdomain. */
async function receivingMember() {
  const member = await signedInMember('viewer');
  const key = await mailKey(member.accountId);
  const addresses = await call<{ domains: { domain: string }[] }>('GET', '/api/v1/inbound/addresses', { token: key });
  const domain = addresses.json.data.domains[0]!.domain;
  const route = await call('POST', '/api/v1/inbound/routes', {
    token: key,
    body: { pattern: `*@${domain}`, action: 'store' },
  });
  expect(route.status).toBe(201);
  const deliver = async (fixture: ReportFixture) => {
    const { message, state } = inboundBytes(fixture);
    await worker.email(message, env);
    expect(state.rejected).toBeNull();
  };
  return { ...member, key, at: (local: string) => `${local}@${domain}`, deliver };
}

const idsIn = (html: string) => [...html.matchAll(/href="\/dashboard\/inbound\/(inm_[a-z2-7]+)"/g)].map((m) => m[1]);

describe('GET /dashboard/inbound', () => {
  it('lists received mail newest first with its flags; filters by recipient and sender', async () => {
    const { browser, at, deliver } = await receivingMember();
    await deliver(plainMessage({ to: at('support'), subject: 'First question' }));
    await deliver(autoReplyMessage({ to: at('billing'), from: 'away@example.org', subject: 'Out of office' }));
    const page = await browser.get('/dashboard/inbound');
    expect(page.status).toBe(200);
    expect(page.text).toContain('2 received, newest first');
    expect(page.text.indexOf('Out of office')).toBeLessThan(page.text.indexOf('First question'));
    expect(page.text).toContain('auto-reply');
    expect(idsIn(page.text)).toHaveLength(2);
    const bySender = await browser.get(`/dashboard/inbound?to=&from=${encodeURIComponent('away@example.org')}`);
    expect(bySender.text).toContain('1 received match');
    expect(bySender.text).not.toContain('First question');
    const byRecipient = await browser.get(`/dashboard/inbound?to=${encodeURIComponent(at('support'))}`);
    expect(byRecipient.text).toContain('First question');
    expect(byRecipient.text).not.toContain('Out of office');
    expect((await browser.get('/dashboard/inbound?from=nope')).status).toBe(400);
  });
});

describe('GET /dashboard/inbound/{inboundId}', () => {
  it('shows the message; attachments download as they came; the HTML is framed under the preview policy', async () => {
    const { browser, at, deliver } = await receivingMember();
    await deliver(htmlWithAttachments({ to: at('billing') }));
    const [id] = idsIn((await browser.get('/dashboard/inbound')).text);
    const page = await browser.get(`/dashboard/inbound/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(at('billing'));
    expect(page.text).toContain('SPF pass, DKIM pass, DMARC pass');
    expect(page.text).toContain(`src="/dashboard/inbound/${id}/html"`);
    for (const [index, sent] of HTML_ATTACHMENTS.entries()) {
      expect(page.text).toContain(`href="/dashboard/inbound/${id}/attachments/${index}"`);
      const file = await browser.get(`/dashboard/inbound/${id}/attachments/${index}`);
      expect(file.status).toBe(200);
      expect(file.headers.get('Content-Type')).toBe(sent.mimeType);
      expect(file.headers.get('Content-Disposition')).toMatch(/^attachment; /);
      expect(file.headers.get('Content-Security-Policy')).toContain('sandbox');
    }
    expect((await browser.get(`/dashboard/inbound/${id}/attachments/3`)).status).toBe(404);
    const html = await browser.get(`/dashboard/inbound/${id}/html`);
    expect(html.headers.get('Content-Security-Policy')).toContain("default-src 'none'");
    expect(html.headers.get('Content-Security-Policy')).toContain('img-src data:;');
    expect(html.text).toContain('cid:sig@01DB5F2A.5C0E');
    // Another account's member sees nothing of it.
    const stranger = await signedInMember('owner');
    expect((await stranger.browser.get(`/dashboard/inbound/${id}`)).status).toBe(404);
    expect((await stranger.browser.get(`/dashboard/inbound/${id}/attachments/0`)).status).toBe(404);
  });

  it("a reply links to the email; the email's page lists its replies", async () => {
    const { browser, accountId, at, deliver } = await receivingMember();
    const emailId = await storedEmail(accountId, [uniqueAddress('thread')], { subject: 'Your receipt' });
    await runBatch([emailId]);
    await deliver(replyTo({ to: at('support'), inReplyTo: `<${emailId}@postcode.dev>`, subject: 'Re: Your receipt' }));
    const [id] = idsIn((await browser.get('/dashboard/inbound')).text);
    expect((await browser.get(`/dashboard/inbound/${id}`)).text).toContain(`href="/dashboard/emails/${emailId}"`);
    const email = await browser.get(`/dashboard/emails/${emailId}`);
    expect(email.text).toContain('<h2>Replies</h2>');
    expect(email.text).toContain(`href="/dashboard/inbound/${id}"`);
    expect(email.text).toContain('Re: Your receipt');
  });
});
