// Delivery routes (MAIL_ROUTES): failover between two real relays, the circuit breaker (and the retries it never
// holds), a 5xx that is final on every route, `rerouted` in the timeline only where a next route was tried, an
// OTP send that fails over inside its wait, and Cloudflare Email Service through the binding as `wrangler dev`
// simulates it (recorded on its way in).
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HALF_OPEN_AFTER_MS, resetBreakers } from '../../src/mail/routes/breaker';
import { accountStore } from '../../src/store/account/client';
import { accountDb } from '../support/account-db';
import { call, codeFromInbox, inbox, newAccount, postWith, uniqueAddress } from '../support/api';
import { makeDue, runBatch, storedEmail } from '../support/delivery';
import { newRelay, setRelayMode, relayStats as statsOf } from '../support/relays';
import type { EmailDetail } from '../support/responses';
import { newWebhook, waitForEvents } from '../support/webhooks';

type Mode = 'ok' | 'reset' | '421' | 'silent';
const relay = async (mode: Mode) => {
  await fetch(`${env.FLAKY_CONTROL_URL}/mode?m=${mode}`, { method: 'POST' });
};
const relayStats = async () => (await (await fetch(`${env.FLAKY_CONTROL_URL}/stats`)).json()) as Record<Mode, number>;

const smtp = (name: string, port: string, more: object = {}) => ({
  name,
  kind: 'smtp',
  host: '127.0.0.1',
  port: Number(port),
  secure: 'none',
  ...more,
});
const withRoutes = (routes: object[], more: Partial<Cloudflare.Env> = {}): Cloudflare.Env => ({
  ...env,
  MAIL_ROUTES: JSON.stringify(routes),
  ...more,
});

const detail = async (accountId: string, id: string) => {
  const email = await accountStore(env, accountId).findEmail(id);
  expect(email?.accountId).toBe(accountId);
  return accountDb(accountId)
    .prepare('SELECT address, status, route, provider_id FROM email_recipients WHERE email_id = ? ORDER BY position')
    .bind(id)
    .all<{ address: string; status: string; route: string | null; provider_id: string | null }>()
    .then((r) => r.results);
};

/** The email's timeline as type and route, oldest first (the queued entry left out). */
const timeline = async (mailKey: string, id: string) => {
  const res = await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey });
  return res.json.data.events.filter((e) => e.type !== 'queued').map((e) => ({ type: e.type, route: e.route }));
};

afterEach(async () => {
  vi.useRealTimers();
  resetBreakers();
  await relay('ok');
});

describe('failover between SMTP routes', () => {
  it.each([
    ['answers 421', '421'],
    ['resets the connection', 'reset'],
  ] as const)(
    'the first route %s: the mail goes through the second at once, the timeline says why',
    async (_, mode) => {
      await relay(mode);
      const { accountId, mailKey } = await newAccount();
      const hook = await newWebhook(mailKey, ['email.sent']);
      const to = uniqueAddress('failover');
      const id = await storedEmail(accountId, to);
      const bindings = withRoutes([smtp('primary', env.FLAKY_SMTP_PORT), smtp('backup', env.SMTP_PORT)]);
      const result = await runBatch([id], 1, 'postcode-mail', bindings);
      expect(result.explicitAcks).toHaveLength(1);
      expect(await inbox(to)).toHaveLength(1);
      expect(await inbox(to, env.FLAKY_INBOX_URL)).toHaveLength(0);
      expect(await detail(accountId, id)).toEqual([
        { address: to, status: 'SENT', route: 'backup', provider_id: null },
      ]);
      const res = await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey });
      expect(res.json.data.recipients).toEqual([{ email: to, kind: 'to', status: 'SENT', route: 'backup' }]);
      const rerouted = res.json.data.events.find((e) => e.type === 'rerouted');
      expect(rerouted).toMatchObject({ route: 'primary', detail: expect.any(String) });
      if (mode === '421') expect(rerouted!.detail).toMatch(/421/);
      const [sent] = await waitForEvents(hook.key, ['email.sent']);
      expect(sent!.payload.data).toMatchObject({ recipient: to, route: 'backup' });
    },
  );

  it('a refused connection (nothing listens) fails over too', async () => {
    const { accountId } = await newAccount();
    const to = uniqueAddress('refused');
    const id = await storedEmail(accountId, to);
    await runBatch([id], 1, 'postcode-mail', withRoutes([smtp('down', env.DOWN_SMTP_PORT), smtp('up', env.SMTP_PORT)]));
    expect(await detail(accountId, id)).toMatchObject([{ status: 'SENT', route: 'up' }]);
    expect(await inbox(to)).toHaveLength(1);
  });

  it('the breaker opens after 3 failures in a row (the route is skipped), half-opens after 30 s, closes on success', async () => {
    await relay('reset');
    const { accountId } = await newAccount();
    const bindings = withRoutes([smtp('flapping', env.FLAKY_SMTP_PORT), smtp('steady', env.SMTP_PORT)]);
    const send = async () => {
      const to = uniqueAddress('breaker');
      const id = await storedEmail(accountId, to);
      await runBatch([id], 1, 'postcode-mail', bindings);
      return { to, id, route: (await detail(accountId, id))[0]!.route };
    };
    for (let i = 0; i < 3; i++) expect((await send()).route).toBe('steady');
    expect((await relayStats()).reset).toBe(3);
    // Open: the fourth mail does not try the failing route at all.
    expect((await send()).route).toBe('steady');
    expect((await relayStats()).reset).toBe(3);
    // 30 s later one mail probes it: still failing → open again, no second probe right after.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + HALF_OPEN_AFTER_MS + 1_000);
    expect((await send()).route).toBe('steady');
    expect((await relayStats()).reset).toBe(4);
    expect((await send()).route).toBe('steady');
    expect((await relayStats()).reset).toBe(4);
    // Healed: the next probe goes through it and the route is used again.
    await relay('ok');
    vi.setSystemTime(Date.now() + HALF_OPEN_AFTER_MS + 1_000);
    const probe = await send();
    expect(probe.route).toBe('flapping');
    expect(await inbox(probe.to, env.FLAKY_INBOX_URL)).toHaveLength(1);
    expect((await send()).route).toBe('flapping');
  });

  it('a 550 on the first route is final: not offered to the second', async () => {
    const { accountId } = await newAccount();
    const refused = uniqueAddress('reject550');
    const good = uniqueAddress('good');
    const id = await storedEmail(accountId, [refused, good]);
    await runBatch(
      [id],
      1,
      'postcode-mail',
      withRoutes([smtp('first', env.FLAKY_SMTP_PORT), smtp('second', env.SMTP_PORT)]),
    );
    expect(await detail(accountId, id)).toMatchObject([
      { address: refused, status: 'FAILED', route: 'first' },
      { address: good, status: 'SENT', route: 'first' },
    ]);
    expect(await inbox(good, env.FLAKY_INBOX_URL)).toHaveLength(1);
    expect(await inbox(refused)).toHaveLength(0);
    expect(await inbox(good)).toHaveLength(0);
  });

  it('every route failing: the email waits for its retry (transient), with each route in the timeline', async () => {
    await relay('421');
    const { accountId } = await newAccount();
    const id = await storedEmail(accountId, uniqueAddress('nowhere'));
    const bindings = withRoutes([smtp('a', env.FLAKY_SMTP_PORT), smtp('b', env.DOWN_SMTP_PORT)]);
    const result = await runBatch([id], 1, 'postcode-mail', bindings);
    expect(result.retryMessages).toHaveLength(1);
    expect(await accountStore(env, accountId).findEmail(id)).toMatchObject({ status: 'QUEUED', attempts: 1 });
  });
});

describe('the timeline: rerouted only where a next route was tried', () => {
  it('one route that fails as a route: deferred with its reply, never rerouted', async () => {
    const port = await newRelay('421');
    const { accountId, mailKey } = await newAccount();
    const id = await storedEmail(accountId, uniqueAddress('alone'));
    const result = await runBatch([id], 1, 'postcode-mail', withRoutes([smtp('alone', port)]));
    expect(result.retryMessages).toHaveLength(1);
    const res = await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey });
    expect(res.json.data.events.filter((e) => e.type !== 'queued')).toEqual([
      { type: 'deferred', at: expect.any(String), route: 'alone', detail: expect.stringMatching(/: 421 4\.3\.2 /) },
    ]);
  });

  it('every route failing: rerouted for each route that led to another, deferred for the last', async () => {
    const [first, second] = [await newRelay('421'), await newRelay('reset')];
    const { accountId, mailKey } = await newAccount();
    const id = await storedEmail(accountId, uniqueAddress('nowhere'));
    const routes = [smtp('a', first), smtp('b', second), smtp('c', env.DOWN_SMTP_PORT)];
    await runBatch([id], 1, 'postcode-mail', withRoutes(routes));
    expect(await timeline(mailKey, id)).toEqual([
      { type: 'rerouted', route: 'a' },
      { type: 'rerouted', route: 'b' },
      { type: 'deferred', route: 'c' },
    ]);
  });

  it('the last route tried fails while the one after it is skipped (breaker open): deferred, not rerouted', async () => {
    const { accountId, mailKey } = await newAccount();
    const down = smtp('down', env.DOWN_SMTP_PORT);
    for (let i = 0; i < 3; i++) {
      await runBatch([await storedEmail(accountId, uniqueAddress('open'))], 1, 'postcode-mail', withRoutes([down]));
    }
    const id = await storedEmail(accountId, uniqueAddress('stuck'));
    await runBatch([id], 1, 'postcode-mail', withRoutes([smtp('flaky', await newRelay('421')), down]));
    expect(await timeline(mailKey, id)).toEqual([{ type: 'deferred', route: 'flaky' }]);
  });
});

describe('the breaker never holds a retry that has nothing else to try', () => {
  /** A mail's first attempt while every route's breaker is open: skipped, it waits for its retry. */
  const skippedOnce = async (accountId: string, bindings: Cloudflare.Env) => {
    const to = uniqueAddress('held');
    const id = await storedEmail(accountId, to);
    await runBatch([id], 1, 'postcode-mail', bindings);
    expect(await accountStore(env, accountId).findEmail(id)).toMatchObject({
      status: 'QUEUED',
      attempts: 1,
      lastReply: expect.stringMatching(/circuit breaker is open/),
    });
    await makeDue(id);
    return { id, to };
  };

  it('the only route is open: a first attempt skips it, the retry probes it and is delivered', async () => {
    const port = await newRelay('reset');
    const { accountId } = await newAccount();
    const bindings = withRoutes([smtp('solo', port)]);
    for (let i = 0; i < 3; i++)
      await runBatch([await storedEmail(accountId, uniqueAddress('down'))], 1, 'postcode-mail', bindings);
    expect((await statsOf(port)).reset).toBe(3);
    const { id, to } = await skippedOnce(accountId, bindings);
    expect((await statsOf(port)).reset).toBe(3);
    // The relay is back well within the breaker's 30 s: the retry does not wait for them.
    await setRelayMode(port, 'ok');
    await runBatch([id], 2, 'postcode-mail', bindings);
    expect(await detail(accountId, id)).toMatchObject([{ status: 'SENT', route: 'solo' }]);
    expect(await inbox(to, env.FLAKY_INBOX_URL)).toHaveLength(1);
  });

  it('retries in one batch probe a route that is still down once, and wait for their next retry', async () => {
    const port = await newRelay('reset');
    const { accountId } = await newAccount();
    const bindings = withRoutes([smtp('solo', port)]);
    for (let i = 0; i < 3; i++)
      await runBatch([await storedEmail(accountId, uniqueAddress('down'))], 1, 'postcode-mail', bindings);
    const retries = [await skippedOnce(accountId, bindings), await skippedOnce(accountId, bindings)];
    const result = await runBatch(
      retries.map((r) => r.id),
      2,
      'postcode-mail',
      bindings,
    );
    expect(result.retryMessages).toHaveLength(2);
    expect((await statsOf(port)).reset).toBe(4);
    for (const { id } of retries)
      expect(await accountStore(env, accountId).findEmail(id)).toMatchObject({ status: 'QUEUED', attempts: 2 });
  });

  it('another route open: a retry goes through it and leaves the open one alone', async () => {
    const port = await newRelay('reset');
    const { accountId } = await newAccount();
    const bindings = withRoutes([smtp('flapping', port), smtp('steady', env.SMTP_PORT)]);
    for (let i = 0; i < 3; i++)
      await runBatch([await storedEmail(accountId, uniqueAddress('down'))], 1, 'postcode-mail', bindings);
    expect((await statsOf(port)).reset).toBe(3);
    const id = await storedEmail(accountId, uniqueAddress('retry'));
    await accountDb(accountId).prepare('UPDATE emails SET attempts = 1 WHERE id = ?').bind(id).run();
    await runBatch([id], 2, 'postcode-mail', bindings);
    expect(await detail(accountId, id)).toMatchObject([{ status: 'SENT', route: 'steady' }]);
    expect((await statsOf(port)).reset).toBe(3);
  });
});

describe('an OTP send fails over inside its bounded wait', () => {
  it('a silent first relay: the code still goes out through the second within OTP_SEND_WAIT_MS', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('otp-failover');
    const vars = { MAIL_ROUTES: JSON.stringify([smtp('silent', env.SILENT_SMTP_PORT), smtp('main', env.SMTP_PORT)]) };
    const started = Date.now();
    const res = await postWith<{ sent: boolean }>(vars, '/api/v1/backend-otp/send', serverKey, { email });
    expect(res.status).toBe(200);
    expect(res.json.data.sent).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_500);
    expect(await codeFromInbox(email)).toMatch(/^\d{6}$/);
  });
});

/** The simulated binding, with what reached it recorded; `refuse` throws a binding error for a call. */
function recordingBinding(refuse: (builder: EmailMessageBuilder) => string | null = () => null) {
  const calls: EmailMessageBuilder[] = [];
  const binding = {
    async send(builder: EmailMessageBuilder) {
      calls.push(builder);
      const code = refuse(builder);
      if (code) throw Object.assign(new Error(`refused (${code})`), { code });
      return env.EMAIL.send(builder);
    },
  } as SendEmail;
  return { calls, binding };
}

const everyone = (b: EmailMessageBuilder) => [b.to, b.cc, b.bcc].flat().filter(Boolean) as string[];

describe('the cloudflare route (send_email binding EMAIL)', () => {
  it('maps the composed email onto the binding: from, to/cc/bcc, replyTo, bodies, attachments, the headers it takes', async () => {
    const { accountId, mailKey } = await newAccount();
    const [to, cc, bcc] = [uniqueAddress('cf-to'), uniqueAddress('cf-cc'), uniqueAddress('cf-bcc')];
    await env.ATTACHMENTS.put('cf-test/receipt.txt', 'receipt body');
    const id = await storedEmail(accountId, to, {
      ccAddresses: [cc],
      bccAddresses: [bcc],
      replyTo: ['support@postcode.dev'],
      html: '<p>hi</p>',
      text: 'hi',
      headers: { 'X-Campaign': 'fall', 'List-Unsubscribe': '<https://postcode.dev/u>', 'Thread-Topic': 'no' },
      attachments: [
        { filename: 'receipt.txt', contentType: 'text/plain', contentId: null, size: 12, key: 'cf-test/receipt.txt' },
      ],
    });
    const { calls, binding } = recordingBinding();
    await runBatch([id], 1, 'postcode-mail', withRoutes([{ name: 'cf', kind: 'cloudflare' }], { EMAIL: binding }));
    expect(calls).toEqual([
      {
        from: { email: 'no-reply@postcode.dev', name: 'postcode' },
        to: [to],
        cc: [cc],
        bcc: [bcc],
        replyTo: 'support@postcode.dev',
        subject: `Subject ${id}`,
        html: '<p>hi</p>',
        text: 'hi',
        headers: { 'X-Campaign': 'fall', 'List-Unsubscribe': '<https://postcode.dev/u>' },
        attachments: [
          { disposition: 'attachment', filename: 'receipt.txt', type: 'text/plain', content: btoa('receipt body') },
        ],
      },
    ]);
    const rows = await detail(accountId, id);
    expect(rows.map((r) => [r.status, r.route])).toEqual([
      ['SENT', 'cf'],
      ['SENT', 'cf'],
      ['SENT', 'cf'],
    ]);
    // The binding's message id, kept per recipient to match its events.
    expect(new Set(rows.map((r) => r.provider_id)).size).toBe(1);
    expect(rows[0]!.provider_id).toMatch(/^<.+@postcode\.dev>$/);
    const res = await call<EmailDetail>('GET', `/api/v1/emails/${id}`, { token: mailKey });
    expect(res.json.data.status).toBe('SENT');
  });

  it('more than 50 recipients: several calls of at most 50, each recipient with its call’s message id', async () => {
    const { accountId } = await newAccount();
    const to = Array.from({ length: 60 }, (_, i) => uniqueAddress(`many${i}`));
    const id = await storedEmail(accountId, to);
    const { calls, binding } = recordingBinding();
    await runBatch([id], 1, 'postcode-mail', withRoutes([{ name: 'cf', kind: 'cloudflare' }], { EMAIL: binding }));
    expect(calls.map((c) => everyone(c).length)).toEqual([50, 10]);
    const rows = await detail(accountId, id);
    expect(rows.every((r) => r.status === 'SENT')).toBe(true);
    expect(new Set(rows.map((r) => r.provider_id)).size).toBe(2);
  });

  it('a recipient on Cloudflare’s suppression list: that one SUPPRESSED (found by sending one by one), the rest sent', async () => {
    const { accountId } = await newAccount();
    const [blocked, fine] = [uniqueAddress('cf-blocked'), uniqueAddress('cf-fine')];
    const id = await storedEmail(accountId, [blocked, fine]);
    const { calls, binding } = recordingBinding((b) =>
      everyone(b).includes(blocked) ? 'E_RECIPIENT_SUPPRESSED' : null,
    );
    await runBatch([id], 1, 'postcode-mail', withRoutes([{ name: 'cf', kind: 'cloudflare' }], { EMAIL: binding }));
    expect(calls.map(everyone)).toEqual([[blocked, fine], [blocked], [fine]]);
    expect(await detail(accountId, id)).toMatchObject([
      { address: blocked, status: 'SUPPRESSED', route: 'cf' },
      { address: fine, status: 'SENT', route: 'cf' },
    ]);
    expect(await accountStore(env, accountId).findEmail(id)).toMatchObject({ status: 'SENT' });
    // Cloudflare's list is its own: the account's list is not changed.
    const listed = await accountDb(accountId)
      .prepare('SELECT COUNT(*) AS n FROM suppressions WHERE account_id = ?')
      .bind(accountId)
      .first<{ n: number }>();
    expect(listed!.n).toBe(0);
  });

  it('a rate limit on the cloudflare route fails over to the SMTP relay; a refused sender domain is final', async () => {
    const { accountId } = await newAccount();
    const to = uniqueAddress('cf-limited');
    const limited = await storedEmail(accountId, to);
    const { binding } = recordingBinding(() => 'E_RATE_LIMIT_EXCEEDED');
    const routes = [{ name: 'cf', kind: 'cloudflare' }, smtp('relay', env.SMTP_PORT)];
    await runBatch([limited], 1, 'postcode-mail', withRoutes(routes, { EMAIL: binding }));
    expect(await detail(accountId, limited)).toMatchObject([{ status: 'SENT', route: 'relay' }]);
    expect(await inbox(to)).toHaveLength(1);

    const refused = await storedEmail(accountId, uniqueAddress('cf-refused'));
    const strict = recordingBinding(() => 'E_SENDER_NOT_VERIFIED');
    await runBatch([refused], 1, 'postcode-mail', withRoutes(routes, { EMAIL: strict.binding }));
    expect(await accountStore(env, accountId).findEmail(refused)).toMatchObject({
      status: 'FAILED',
      lastReply: expect.stringMatching(/E_SENDER_NOT_VERIFIED/),
    });
  });
});
