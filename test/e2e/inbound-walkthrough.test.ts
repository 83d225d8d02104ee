// The walk-through of docs/inbound.md under `npm start`: a route with action webhook, `postcode webhooks listen`
// printing events, and `npm run simulate -- inbound` handing mail to the Worker's email() handler as Email Routing
// would (wrangler dev's /cdn-cgi/handler/email). The message arrives as `email.received`; a reply joins its thread.
import { describe, expect, it } from 'vitest';
import { runCli } from './cli-lines';
import { ownAccount } from './sdk-support';
import { runScript, service, succeeded } from './shared-service';

type Received = {
  type: string;
  data: { subject: string; to: string; from: { address: string }; text: string; emailId: string | null };
};

describe('docs/inbound.md: the walk-through under npm start', () => {
  it('route → listen → simulate: email.received printed by the CLI; a reply is on the email; no route refuses', async () => {
    // npm start gives the demo account its support@ route (step 1 of the docs); the rest runs in an account of its
    // own, with the same route.
    const demo = await succeeded<{ routes: { pattern: string; action: string }[] }>(
      'GET',
      '/api/v1/inbound/routes',
      service.mailKey,
    );
    expect(demo.routes).toEqual([
      expect.objectContaining({ pattern: 'support@demo-account.inbound.postcode.localhost', action: 'webhook' }),
    ]);
    const account = await ownAccount(`Inbound walk ${Date.now()}`);
    const key = account.mailKey;
    const { domains } = await succeeded<{ domains: { domain: string }[] }>('GET', '/api/v1/inbound/addresses', key);
    const support = `support@${domains[0]!.domain}`;
    await succeeded('POST', '/api/v1/inbound/routes', key, { pattern: support, action: 'webhook' });

    const listen = ['webhooks', 'listen', '--events', 'email.received'];
    const { cli, out, exited, stderr } = runCli(listen, { baseUrl: service.baseUrl, apiKey: key });
    try {
      await expect.poll(() => out[0], { timeout: 20_000 }).toMatchObject({ type: 'ready', events: ['email.received'] });
      await expect
        .poll(
          async () => (await succeeded<{ listeners: unknown[] }>('GET', '/api/v1/webhook-listeners', key)).listeners,
          {
            timeout: 10_000,
          },
        )
        .toHaveLength(1);

      const simulated = runScript('simulate.mjs', 'inbound', support);
      expect(simulated.output).toContain(`handed to the email handler for ${support}: HTTP 200`);
      expect(simulated.code).toBe(0);
      // A delivery the queue lost is recovered within its lease and a minute: the wait allows for that.
      const deliveryWait = 90_000;
      await expect.poll(() => out.length, { timeout: deliveryWait }).toBeGreaterThanOrEqual(2);
      const first = out[1] as { type: string; status: number; event: Received };
      expect(first).toMatchObject({ type: 'email.received', status: 200 });
      expect(first.event.data).toMatchObject({
        to: support,
        from: { address: 'ada@example.com' },
        subject: 'A question about my invoice',
        emailId: null,
        attachments: [{ filename: 'notes.txt', contentType: 'text/plain' }],
      });

      // A reply to a mail the account sent joins its thread; the email's detail lists it.
      const sent = await succeeded<{ id: string }>('POST', '/api/v1/emails', key, {
        to: `walk.${Date.now()}@example.com`,
        subject: 'Your receipt',
        text: 'Thanks for your order.',
      });
      await expect
        .poll(async () => (await succeeded<{ status: string }>('GET', `/api/v1/emails/${sent.id}`, key)).status, {
          timeout: 20_000,
        })
        .toBe('SENT');
      const reply = runScript('simulate.mjs', 'inbound', support, '--in-reply-to', sent.id, '--text', 'Got it!');
      expect(reply.code, reply.output).toBe(0);
      await expect
        .poll(() => out.length, { timeout: deliveryWait, message: `${JSON.stringify(out)} ${reply.output}` })
        .toBeGreaterThanOrEqual(3);
      expect((out[2] as { event: Received }).event.data).toMatchObject({
        subject: 'Re: Your receipt',
        emailId: sent.id,
        text: expect.stringContaining('Got it!'),
      });
      const detail = await succeeded<{ replies: { subject: string }[] }>('GET', `/api/v1/emails/${sent.id}`, key);
      expect(detail.replies).toEqual([expect.objectContaining({ subject: 'Re: Your receipt' })]);

      // An address no route takes is refused, and the simulator says so.
      const refused = runScript('simulate.mjs', 'inbound', `nobody@${domains[0]!.domain}`);
      expect(refused.code).toBe(1);
      expect(refused.output).toContain('refused');
      const usage = runScript('simulate.mjs', 'inbound', 'not-an-address');
      expect(usage.code).toBe(2);
    } finally {
      cli.kill('SIGINT');
    }
    expect(await exited, stderr()).toBe(0);
    expect(out.at(-1)).toMatchObject({ stopped: true, forwarded: 2 });
  }, 300_000);
});
