import { DurableObject } from 'cloudflare:workers';
import type { Bindings } from '../env';
import { accountStore } from '../store/account/client';
import type { EventType } from '../webhooks/events';

/** A listening session as `POST /api/v1/webhook-listeners` made it, waiting for (then holding) its connection. */
export type ListenerSession = {
  listenerId: string;
  accountId: string;
  events: EventType[];
  secret: string;
  /** Epoch ms: connect before this, or the session is gone. */
  connectBy: number;
  connected: boolean;
};

/** A signed delivery as an endpoint would receive it. */
export type ListenerDelivery = { id: string; headers: Record<string, string>; body: string };

/** The attempt's answer, as a POST to an endpoint would give it. */
export type ListenerAnswer = { httpStatus: number | null; error: string | null; response: string | null };

/** How long the CLI has to forward one event and answer (an endpoint's POST has as long). */
const ANSWER_TIMEOUT_MS = 10_000;
/** While connected, the alarm looks this often whether the connection is still there. */
const LIVENESS_MS = 10 * 60_000;
const RESPONSE_KEEP_CHARS = 2_048;
export const LISTENER_ENDED = 'the listening session has ended';

type Forwarded = { type: 'forwarded'; id: string; status: number | null; error?: string; response?: string };

/**
 * One `postcode webhooks listen` session: it holds the CLI's WebSocket (hibernating between events) and is the
 * endpoint its deliveries go to. An event goes down the socket signed as for an endpoint; the CLI forwards it to
 * the local URL and answers with the status, which counts as the endpoint's answer. When the socket closes (or
 * the alarm finds it gone) the session's endpoint is removed from the account: nothing stays registered.
 */
export class WebhookListener extends DurableObject<Bindings> {
  private readonly answers = new Map<string, (answer: ListenerAnswer) => void>();

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    // The CLI's keepalive is answered without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('{"type":"ping"}', '{"type":"pong"}'));
  }

  private session() {
    return this.ctx.storage.get<ListenerSession>('session');
  }

  /** Makes the session; it waits `connectBy` for its connection, then the alarm forgets it. */
  async open(session: Omit<ListenerSession, 'connected'>): Promise<void> {
    await this.ctx.storage.put('session', { ...session, connected: false });
    await this.ctx.storage.setAlarm(session.connectBy);
  }

  /** Whether the account's session waits for its connection. */
  async waiting(accountId: string): Promise<boolean> {
    const session = await this.session();
    return session?.accountId === accountId && !session.connected && session.connectBy > Date.now();
  }

  /**
   * The WebSocket upgrade, from the route that checked the key (it names the account in `x-postcode-account`;
   * nothing but this Worker reaches an object). 404 when the session does not wait, 409 past the account's limit.
   */
  async fetch(request: Request): Promise<Response> {
    const accountId = request.headers.get('x-postcode-account') ?? '';
    const session = await this.session();
    if (!session || !(await this.waiting(accountId))) return new Response(null, { status: 404 });
    const store = accountStore(this.env, accountId);
    const added = await store.addListener({
      id: session.listenerId,
      accountId,
      events: session.events,
      secret: session.secret,
    });
    if (!added) return new Response(null, { status: 409 });
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    await this.ctx.storage.put('session', { ...session, connected: true });
    await this.ctx.storage.setAlarm(Date.now() + LIVENESS_MS);
    server.send(JSON.stringify({ type: 'ready', listenerId: session.listenerId, events: session.events }));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sends one delivery down the socket and waits for the CLI's answer. */
  async deliver(delivery: ListenerDelivery): Promise<ListenerAnswer> {
    const [socket] = this.ctx.getWebSockets();
    if (!socket) {
      await this.end();
      return { httpStatus: null, error: LISTENER_ENDED, response: null };
    }
    const answer = new Promise<ListenerAnswer>((resolve) => {
      this.answers.set(delivery.id, resolve);
      setTimeout(() => {
        if (this.answers.delete(delivery.id)) {
          resolve({ httpStatus: null, error: `no answer within ${ANSWER_TIMEOUT_MS / 1000} s`, response: null });
        }
      }, ANSWER_TIMEOUT_MS);
    });
    socket.send(JSON.stringify({ type: 'event', ...delivery }));
    return answer;
  }

  async webSocketMessage(_socket: WebSocket, message: string | ArrayBuffer): Promise<void> {
    let forwarded: Forwarded;
    try {
      forwarded = JSON.parse(typeof message === 'string' ? message : new TextDecoder().decode(message));
    } catch {
      return; // not ours to answer
    }
    if (forwarded?.type !== 'forwarded' || typeof forwarded.id !== 'string') return;
    const resolve = this.answers.get(forwarded.id);
    if (!resolve) return;
    this.answers.delete(forwarded.id);
    const status = typeof forwarded.status === 'number' ? forwarded.status : null;
    const ok = status !== null && status >= 200 && status < 300;
    resolve({
      httpStatus: status,
      error: ok ? null : (forwarded.error ?? (status === null ? 'not forwarded' : `HTTP ${status}`)).slice(0, 300),
      response: typeof forwarded.response === 'string' ? forwarded.response.slice(0, RESPONSE_KEEP_CHARS) : null,
    });
  }

  async webSocketClose(socket: WebSocket, code: number): Promise<void> {
    try {
      socket.close(code === 1005 ? 1000 : code, 'listening ended');
    } catch {
      // closed already
    }
    await this.end();
  }

  async webSocketError(): Promise<void> {
    await this.end();
  }

  /** A session never connected is forgotten; a connected one whose socket is gone is ended. */
  async alarm(): Promise<void> {
    const session = await this.session();
    if (session?.connected && this.ctx.getWebSockets().length > 0) {
      await this.ctx.storage.setAlarm(Date.now() + LIVENESS_MS);
      return;
    }
    await this.end();
  }

  /** Removes the session's endpoint from the account and forgets the session. */
  private async end(): Promise<void> {
    const session = await this.session();
    if (session?.connected)
      await accountStore(this.env, session.accountId).removeListener(session.accountId, session.listenerId);
    for (const [id, resolve] of this.answers) {
      this.answers.delete(id);
      resolve({ httpStatus: null, error: LISTENER_ENDED, response: null });
    }
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }
}
