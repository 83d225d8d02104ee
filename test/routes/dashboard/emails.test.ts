// The send log in the dashboard: the API's filters and paging, an email's page, and a scheduled email called off
// or moved.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { DeliveryEvent } from '../../../src/mail/delivery-events';
import { applyDeliveryEvent } from '../../../src/mail/feedback';
import { call, uniqueAddress, waitForStatus } from '../../support/api';
import { mailKey, signedInMember } from '../../support/dashboard';
import { runBatch, storedEmail } from '../../support/delivery';

type Detail = { status: string; scheduledAt?: string };

async function send(key: string, body: Record<string, unknown>) {
  const res = await call<{ id: string }>('POST', '/api/v1/emails', { token: key, body: { text: 'hi', ...body } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.data.id;
}

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 16);

describe('GET /dashboard/emails', () => {
  it("lists the account's live mail newest first, filtered by status, recipient and tag as the API filters", async () => {
    const { browser, accountId } = await signedInMember('viewer');
    const key = await mailKey(accountId);
    const to = uniqueAddress('listed');
    const first = await send(key, { to, subject: 'First', tags: [{ name: 'kind', value: 'welcome' }] });
    const second = await send(key, { to: uniqueAddress('other'), subject: 'Second' });
    await waitForStatus(key, first, 'SENT');
    await waitForStatus(key, second, 'SENT');
    const page = await browser.get('/dashboard/emails');
    expect(page.status).toBe(200);
    expect(page.text.indexOf('>Second</a>')).toBeLessThan(page.text.indexOf('>First</a>'));
    expect(page.text).toContain(`href="/dashboard/emails/${first}"`);
    expect(page.text).toContain('2 live emails');
    const byTo = await browser.get(`/dashboard/emails?to=${encodeURIComponent(to)}`);
    expect(byTo.text).toContain('>First</a>');
    expect(byTo.text).not.toContain('>Second</a>');
    // As the filter form sends it: every field, the empty ones too.
    const byTag = await browser.get('/dashboard/emails?status=&to=&tag=kind:welcome');
    expect(byTag.text).toContain('1 live emails match');
    expect((await browser.get('/dashboard/emails?status=FAILED')).text).toContain('No emails.');
    expect((await browser.get('/dashboard/emails?status=NOPE')).status).toBe(400);
  });

  it('pages of 25 with a cursor to the older ones; test mail only with mode=test', async () => {
    const { browser, accountId } = await signedInMember('viewer');
    for (let i = 0; i < 26; i++) await storedEmail(accountId, uniqueAddress('paged'), { subject: `Paged ${i}` });
    const first = await browser.get('/dashboard/emails');
    expect(first.text.match(/<tr><td/g)).toHaveLength(25);
    const older = /href="(\/dashboard\/emails\?after=[A-Za-z0-9_-]+)"/.exec(first.text)![1]!;
    const second = await browser.get(older);
    expect(second.text.match(/<tr><td/g)).toHaveLength(1);
    const testKey = await mailKey(accountId, 'test');
    await send(testKey, { to: uniqueAddress('t'), subject: 'Test only' });
    expect((await browser.get('/dashboard/emails')).text).not.toContain('Test only');
    expect((await browser.get('/dashboard/emails?mode=test')).text).toContain('Test only');
  });
});

describe('GET /dashboard/emails/{emailId}', () => {
  it('shows recipients, the timeline with the route, headers, and the HTML body in a sandboxed frame', async () => {
    const { browser, accountId } = await signedInMember('viewer');
    const key = await mailKey(accountId);
    const to = uniqueAddress('detail');
    const id = await send(key, {
      to,
      subject: 'Detail',
      html: '<p style="color:red">Hello <script>alert(1)</script></p>',
      headers: { 'X-Campaign': 'autumn' },
    });
    await waitForStatus(key, id, 'SENT');
    const page = await browser.get(`/dashboard/emails/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<td data-label="Address">${to}</td>`);
    expect(page.text).toContain('<td data-label="Route">smtp</td>');
    expect(page.text).toContain('<dt>X-Campaign</dt><dd>autumn</dd>');
    expect(page.text).toContain(
      `<iframe tabindex="-1" class="preview" title="The HTML body" sandbox="" src="/dashboard/emails/${id}/html"`,
    );
    expect(page.text).not.toContain('<script>alert(1)');
    const html = await browser.get(`/dashboard/emails/${id}/html`);
    expect(html.status).toBe(200);
    expect(html.text).toContain('<p style="color:red">');
    const policy = html.headers.get('Content-Security-Policy')!;
    expect(policy).toMatch(/^sandbox; default-src 'none'/);
    expect(policy).not.toContain('script-src');
    expect(html.headers.get('X-Frame-Options')).toBe('SAMEORIGIN');
  });

  it('a bounced recipient: its type and its reason in words beside the status', async () => {
    const { browser, accountId } = await signedInMember('viewer');
    const to = [uniqueAddress('full'), uniqueAddress('gone'), uniqueAddress('unsure')];
    const id = await storedEmail(accountId, to);
    await runBatch([id]);
    const reasons = [{ bounceReason: 'mailbox_full' }, { bounceReason: 'user_unknown' }, {}] as const;
    for (const [i, reason] of reasons.entries()) {
      const event: DeliveryEvent = {
        target: { emailId: id },
        recipient: to[i]!,
        kind: 'bounced',
        diagnostic: null,
        route: null,
        ...reason,
      };
      expect(await applyDeliveryEvent(env, event)).toBe('applied');
    }
    const page = await browser.get(`/dashboard/emails/${id}`);
    const status = (words: string) =>
      `<td data-label="Status"><span class="badge status-bounced">BOUNCED</span> (${words})</td>`;
    expect(page.text).toContain(status('soft, mailbox full'));
    expect(page.text).toContain(status('hard, no such mailbox'));
    expect(page.text).toContain(status('undetermined, reason unknown'));
  });

  it("another account's email, and a test email without mode=test, are not found (404)", async () => {
    const other = await signedInMember('owner');
    const id = await storedEmail(other.accountId, uniqueAddress('theirs'));
    const { browser, accountId } = await signedInMember('owner');
    expect((await browser.get(`/dashboard/emails/${id}`)).status).toBe(404);
    const testId = await storedEmail(accountId, uniqueAddress('test'), { test: true });
    expect((await browser.get(`/dashboard/emails/${testId}`)).status).toBe(404);
    expect((await browser.get(`/dashboard/emails/${testId}?mode=test`)).status).toBe(200);
  });
});

describe('POST /dashboard/emails/{emailId}/cancel and /move', () => {
  it('a developer moves a scheduled email, then calls it off; the API shows both', async () => {
    const { browser, accountId } = await signedInMember('developer');
    const key = await mailKey(accountId);
    const id = await send(key, { to: uniqueAddress('sched'), subject: 'Later', scheduledAt: `${tomorrow()}:00Z` });
    const page = await browser.get(`/dashboard/emails/${id}`);
    expect(page.text).toContain(`action="/dashboard/emails/${id}/cancel"`);
    const later = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 16);
    const moved = await browser.post(`/dashboard/emails/${id}/move`, { scheduledAt: later, mode: 'live' });
    expect(moved.status).toBe(303);
    expect(moved.location).toBe(`/dashboard/emails/${id}?done=moved`);
    const detail = await call<Detail>('GET', `/api/v1/emails/${id}`, { token: key });
    expect(detail.json.data.scheduledAt).toBe(`${later}:00.000Z`);
    expect((await browser.post(`/dashboard/emails/${id}/cancel`, { mode: 'live' })).status).toBe(303);
    expect((await call<Detail>('GET', `/api/v1/emails/${id}`, { token: key })).json.data.status).toBe('CANCELED');
    const again = await browser.post(`/dashboard/emails/${id}/cancel`, { mode: 'live' });
    expect(again.status).toBe(409);
    expect(again.text).toContain('only a SCHEDULED email can be canceled; this one is CANCELED');
  });

  it("a time in the past is refused on the page with the API's rule; a viewer sees no control", async () => {
    const { browser, accountId } = await signedInMember('admin');
    const key = await mailKey(accountId);
    const id = await send(key, { to: uniqueAddress('sched'), subject: 'Later', scheduledAt: `${tomorrow()}:00Z` });
    const past = await browser.post(`/dashboard/emails/${id}/move`, { scheduledAt: '2020-01-01T00:00', mode: 'live' });
    expect(past.status).toBe(400);
    expect(past.text).toContain('scheduledAt: must be');
    const viewer = await signedInMember('viewer', accountId);
    const seen = await viewer.browser.get(`/dashboard/emails/${id}`);
    expect(seen.text).not.toContain('/cancel"');
    expect(seen.text).not.toContain('/move"');
  });
});
