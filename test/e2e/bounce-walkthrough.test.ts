// docs/delivery.md's walk-through under `npm start`: send a mail, `npm run simulate` posts a bounce (or a
// complaint) for it to wrangler dev's email() handler, and the API shows the recipient BOUNCED (COMPLAINED).
import { describe, expect, it } from 'vitest';
import { api, runScript, service } from './shared-service';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const simulate = (...args: string[]) => runScript('simulate.mjs', ...args);

type Detail = { status: string; recipients: { email: string; status: string; bounceType?: string }[] };

/** Queues a mail to `to` and waits until it is SENT (in the inbox, with its envelope). */
async function sentTo(to: string): Promise<string> {
  const queued = await api<{ id: string }>('POST', '/api/v1/emails', { to, subject: 'Receipt', text: 'Thanks' });
  expect(queued.status).toBe(200);
  for (let i = 0; i < 100; i++) {
    if ((await api<Detail>('GET', `/api/v1/emails/${queued.data.id}`)).data.status === 'SENT') break;
    await sleep(100);
  }
  return queued.data.id;
}

async function statusOf(id: string, wanted: string): Promise<Detail> {
  let detail = (await api<Detail>('GET', `/api/v1/emails/${id}`)).data;
  for (let i = 0; i < 50 && detail.status !== wanted; i++) {
    await sleep(100);
    detail = (await api<Detail>('GET', `/api/v1/emails/${id}`)).data;
  }
  return detail;
}

describe('docs/delivery.md: bounces and complaints under npm start', () => {
  it('npm run simulate -- bounce: the recipient BOUNCED (hard) and the address suppressed', async () => {
    const to = `bounce-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const id = await sentTo(to);
    const run = simulate('bounce', id, to);
    expect(run.output).toContain('HTTP 200');
    expect(run.code).toBe(0);
    const detail = await statusOf(id, 'BOUNCED');
    expect(detail.status).toBe('BOUNCED');
    expect(detail.recipients).toMatchObject([{ email: to, status: 'BOUNCED', bounceType: 'hard' }]);
    const list = await api<{ suppressions: { email: string; reason: string }[] }>('GET', '/api/v1/suppressions');
    expect(list.data.suppressions).toContainEqual(expect.objectContaining({ email: to, reason: 'hard_bounce' }));
  });

  it('npm run simulate -- complaint: COMPLAINED through the feedback address', async () => {
    const to = `complaint-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const id = await sentTo(to);
    expect(simulate('complaint', id, to).code).toBe(0);
    const detail = await statusOf(id, 'DELIVERED');
    expect(detail.recipients).toMatchObject([{ email: to, status: 'COMPLAINED' }]);
  });

  it('an address wrangler dev’s handler is not meant for is refused; bad arguments are a usage error', async () => {
    const url = `${service.baseUrl}/cdn-cgi/handler/email?from=a%40example.com&to=${encodeURIComponent('info@bounces.postcode.localhost')}`;
    const message =
      'From: a@example.com\r\nTo: info@bounces.postcode.localhost\r\nMessage-ID: <m1@example.com>\r\nSubject: hi\r\n\r\nhi\r\n';
    const res = await fetch(url, { method: 'POST', body: message });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/rejected email.*No such mailbox/);
    expect(simulate('explode', 'em_x', 'a@b').code).toBe(2);
  });
});
