// Listening sessions (/api/v1/webhook-listeners): the account's events delivered into a WebSocket, signed with the
// session's secret, answered by the holder of the socket; nothing registered once it closes.
import { runDurableObjectAlarm } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { call, eventually, expectError, newAccount, uniqueAddress } from '../support/api';
import type { Webhook as Endpoint } from '../support/webhooks';

type Created = { listenerId: string; secret: string; events: string[]; connectUrl: string; connectBy: string };
type Down = { type: string; id?: string; headers?: Record<string, string>; body?: string; listenerId?: string };

const open = (token: string, body: object = {}) => call<Created>('POST', '/api/v1/webhook-listeners', { token, body });

const listeners = async (token: string) =>
  (await call<{ listeners: { listenerId: string }[] }>('GET', '/api/v1/webhook-listeners', { token })).json.data
    .listeners;

/** Opens the session's WebSocket as the CLI does: the key in Authorization, `Upgrade: websocket`. */
async function connect(token: string, listenerId: string) {
  const res = await exports.default.fetch(
    new Request(`http://postcode.test/api/v1/webhook-listeners/${listenerId}`, {
      headers: { Authorization: `Bearer ${token}`, Upgrade: 'websocket' },
    }),
  );
  if (res.status !== 101) expect.fail(`${res.status}: ${await res.text()}`);
  const socket = res.webSocket!;
  const messages: Down[] = [];
  socket.addEventListener('message', (event) => messages.push(JSON.parse(event.data as string) as Down));
  socket.accept();
  const next = (type: string, from = 0) =>
    eventually(async () => messages.slice(from).find((m) => m.type === type), `a ${type} message`, 20_000);
  return { socket, messages, next };
}

const sendEmail = (mailKey: string) =>
  call<{ id: string }>('POST', '/api/v1/emails', {
    token: mailKey,
    body: { to: uniqueAddress('listen'), subject: 'Listen', text: 'Hello' },
  });

describe('POST /api/v1/webhook-listeners', () => {
  it('makes a session with its own secret and a ws URL; events default to those of the key', async () => {
    const { mailKey, serverKey } = await newAccount();
    const res = await open(mailKey);
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({
      listenerId: expect.stringMatching(/^lsn_/),
      secret: expect.stringMatching(/^whsec_/),
      events: expect.arrayContaining(['email.sent', 'suppression.added']),
      connectUrl: `ws://postcode.test/api/v1/webhook-listeners/${res.json.data.listenerId}`,
      connectBy: expect.any(String),
    });
    expect(res.json.data.events.some((e) => e.startsWith('otp.'))).toBe(false);
    expect((await open(serverKey)).json.data.events).toEqual([
      'otp.sent',
      'otp.verified',
      'otp.locked',
      'email_verification.verified',
    ]);
    expectError(await open(mailKey, { events: ['otp.sent'] }), 403, 'SCOPE_REQUIRED');
    expectError(await open(mailKey, { events: [] }), 400, 'INVALID_INPUT');
  });
});

describe('GET /api/v1/webhook-listeners/{listenerId}', () => {
  it('is a WebSocket: 426 without the upgrade, 404 for an unknown session or another account', async () => {
    const { mailKey } = await newAccount();
    const other = await newAccount();
    const { listenerId } = (await open(mailKey)).json.data;
    expectError(
      await call('GET', `/api/v1/webhook-listeners/${listenerId}`, { token: mailKey }),
      426,
      'UPGRADE_REQUIRED',
    );
    const upgrade = { Upgrade: 'websocket' };
    for (const [token, id] of [
      [mailKey, 'lsn_unknown'],
      [other.mailKey, listenerId],
    ] as const) {
      const res = await call('GET', `/api/v1/webhook-listeners/${id}`, { token, headers: upgrade });
      expectError(res, 404, 'LISTENER_NOT_FOUND');
    }
    expectError(
      await call('GET', `/api/v1/webhook-listeners/${listenerId}`, { headers: upgrade }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('delivers signed events into the socket; the answer counts; closing leaves nothing registered', async () => {
    const { mailKey } = await newAccount();
    const created = (await open(mailKey, { events: ['email.queued'] })).json.data;
    const session = await connect(mailKey, created.listenerId);
    expect(await session.next('ready')).toMatchObject({ listenerId: created.listenerId });
    expect(await listeners(mailKey)).toEqual([expect.objectContaining({ listenerId: created.listenerId })]);
    // Not an endpoint of the API: neither listed nor counted.
    const endpoints = await call<{ webhooks: Endpoint[] }>('GET', '/api/v1/webhooks', { token: mailKey });
    expect(endpoints.json.data.webhooks).toEqual([]);
    // A session can be connected once.
    const again = await call('GET', `/api/v1/webhook-listeners/${created.listenerId}`, {
      token: mailKey,
      headers: { Upgrade: 'websocket' },
    });
    expectError(again, 404, 'LISTENER_NOT_FOUND');

    const email = (await sendEmail(mailKey)).json.data;
    const first = await session.next('event');
    const event = new Webhook(created.secret).verify(first.body!, first.headers!) as { type: string; data: object };
    expect(event).toMatchObject({ type: 'email.queued', data: { emailId: email.id } });
    expect(first.headers!['webhook-id']).toBe(first.id);
    // A failed forward is a failed attempt: the same delivery comes again after the first retry delay (5 s).
    session.socket.send(JSON.stringify({ type: 'forwarded', id: first.id, status: 500 }));
    const index = session.messages.indexOf(first);
    const retried = await session.next('event', index + 1);
    expect(retried.id).toBe(first.id);
    session.socket.send(JSON.stringify({ type: 'forwarded', id: retried.id, status: 204 }));

    session.socket.close(1000, 'done');
    await eventually(async () => ((await listeners(mailKey)).length === 0 ? true : undefined), 'the session removed');
  }, 40_000);

  it('at most 5 sessions connected at once: the 6th is 409 WEBHOOK_LIMIT_REACHED', async () => {
    const { mailKey } = await newAccount();
    const sessions = [];
    for (let i = 0; i < 5; i++) sessions.push(await connect(mailKey, (await open(mailKey)).json.data.listenerId));
    const sixth = (await open(mailKey)).json.data.listenerId;
    const res = await call('GET', `/api/v1/webhook-listeners/${sixth}`, {
      token: mailKey,
      headers: { Upgrade: 'websocket' },
    });
    expectError(res, 409, 'WEBHOOK_LIMIT_REACHED');
    for (const session of sessions) session.socket.close(1000);
    await eventually(async () => ((await listeners(mailKey)).length === 0 ? true : undefined), 'all removed');
  });

  it('a session never connected is forgotten by its alarm', async () => {
    const { mailKey } = await newAccount();
    const { listenerId } = (await open(mailKey)).json.data;
    const stub = env.WEBHOOK_LISTENER.get(env.WEBHOOK_LISTENER.idFromName(listenerId));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const res = await call('GET', `/api/v1/webhook-listeners/${listenerId}`, {
      token: mailKey,
      headers: { Upgrade: 'websocket' },
    });
    expectError(res, 404, 'LISTENER_NOT_FOUND');
  });
});
