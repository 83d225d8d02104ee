// `postcode webhooks listen`: the account's events, delivered by the Worker into a WebSocket this process holds
// (no public URL, no tunnel), forwarded to a local URL exactly as an endpoint receives them, one line per event;
// without a URL, each event is taken here and printed whole. The Worker never calls the local URL; the session's
// endpoint is gone once the socket closes.
import { type Command, type Context, dataOf, localFailure, usageError } from '../command.js';
import type { Io } from '../output.js';
import { modeOf } from '../output.js';

type EventMessage = { type: 'event'; id: string; headers: Record<string, string>; body: string };
/** A WebSocket with the constructor options of Node's (undici) implementation: headers on the upgrade. */
type SocketConstructor = new (url: string, options: { headers: Record<string, string> }) => WebSocket;

const PING_EVERY_MS = 30_000;
/** How long Ctrl-C waits for the close to go through before leaving anyway. */
const CLOSE_WAIT_MS = 3_000;
const KEEP_RESPONSE_CHARS = 2_048;

/** The URL to forward to; null: events are printed here and answered 200. */
function forwardUrl(text: string | undefined): string | null {
  if (text === undefined) return null;
  try {
    const url = new URL(text);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch {}
  throw usageError(`--forward-to: expected an http(s) URL, not ${JSON.stringify(text)}`);
}

const eventTypeOf = (body: string) => {
  try {
    return String((JSON.parse(body) as { type?: unknown }).type ?? '?');
  } catch {
    return '?';
  }
};

/**
 * POSTs one event to the local URL; the status (null when it could not be reached) as the Worker records it.
 * Without a URL the event is taken here: 200.
 */
async function forward(url: string | null, event: EventMessage) {
  if (url === null) return { status: 200, response: '' };
  try {
    const res = await fetch(url, { method: 'POST', headers: event.headers, body: event.body, redirect: 'manual' });
    const response = (await res.text().catch(() => '')).slice(0, KEEP_RESPONSE_CHARS);
    return { status: res.status, response };
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    return { status: null, error: cause ?? (error instanceof Error ? error.message : String(error)) };
  }
}

const parsedBody = (body: string): unknown => {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
};

/**
 * One line per event: text on a terminal, a JSON object per line otherwise; `printed` (no URL to forward to)
 * adds the event's body, indented under the line or as `event` in the object.
 */
function eventLine(
  io: Io,
  json: boolean,
  event: EventMessage,
  answer: { status: number | null; error?: string },
  printed: boolean,
) {
  const type = eventTypeOf(event.body);
  if (modeOf(json, io.isTTY) === 'json') {
    const line = {
      id: event.id,
      type,
      status: answer.status,
      ...(answer.error ? { error: answer.error } : {}),
      ...(printed ? { event: parsedBody(event.body) } : {}),
    };
    io.out(`${JSON.stringify(line)}\n`);
  } else {
    const outcome = printed
      ? 'received'
      : answer.status === null
        ? `not forwarded: ${answer.error}`
        : String(answer.status);
    io.out(`${new Date().toISOString()}  ${type.padEnd(28)} ${event.id}  → ${outcome}\n`);
    if (printed) io.out(`${JSON.stringify(parsedBody(event.body), null, 2).replace(/^/gm, '  ')}\n`);
  }
}

/** Until Ctrl-C (SIGINT) or SIGTERM; the Worker ends the session when the socket closes. */
async function listen(ctx: Context) {
  const target = forwardUrl(ctx.flags.string('forward-to'));
  const events = ctx.flags.list('events').flatMap((e) =>
    e
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );
  const Socket = (globalThis as unknown as { WebSocket?: SocketConstructor }).WebSocket;
  if (!Socket)
    throw localFailure(
      'NO_WEBSOCKET',
      'This Node has no WebSocket: use Node 22+ (or 20 with --experimental-websocket)',
    );
  const client = ctx.client();
  const session = dataOf(await client.webhooks.openListener(events.length ? { events: events as never } : {}));
  const json = ctx.flags.boolean('json');
  const { io } = ctx;
  if (modeOf(json, io.isTTY) === 'json') {
    io.out(
      `${JSON.stringify({ type: 'ready', listenerId: session.listenerId, secret: session.secret, events: session.events, forwardTo: target })}\n`,
    );
  } else {
    io.out(
      `Listening for ${session.events.join(', ')}\nSigning secret: ${session.secret} (verify with it in your server)\n${target ? `Forwarding to ${target}` : 'Printing each event here (no --forward-to)'}; Ctrl-C to stop\n`,
    );
  }
  const socket = new Socket(session.connectUrl, { headers: { Authorization: `Bearer ${ctx.settings().apiKey}` } });
  let forwarded = 0;
  let stopping = false;
  let finish: (closed: { code: number; reason: string }) => void = () => {};
  const ended = new Promise<{ code: number; reason: string }>((resolve, reject) => {
    finish = resolve;
    socket.addEventListener('close', (event) => resolve({ code: event.code, reason: event.reason }));
    socket.addEventListener('error', () => {
      if (socket.readyState !== WebSocket.OPEN)
        reject(localFailure('LISTEN_FAILED', `could not connect to ${session.connectUrl}`));
    });
  });
  socket.addEventListener('message', async (message) => {
    let event: EventMessage;
    try {
      event = JSON.parse(String(message.data)) as EventMessage;
    } catch {
      return;
    }
    if (event.type !== 'event') return;
    const answer = await forward(target, event);
    if (socket.readyState === WebSocket.OPEN)
      socket.send(JSON.stringify({ type: 'forwarded', id: event.id, ...answer }));
    forwarded++;
    eventLine(io, json, event, answer, target === null);
  });
  const ping = setInterval(() => socket.readyState === WebSocket.OPEN && socket.send('{"type":"ping"}'), PING_EVERY_MS);
  const stop = () => {
    if (stopping) return;
    stopping = true;
    socket.close(1000, 'listening stopped');
    setTimeout(() => finish({ code: 1000, reason: 'no close frame came back' }), CLOSE_WAIT_MS).unref?.();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    const { code, reason } = await ended;
    if (!stopping)
      throw localFailure('LISTEN_CLOSED', `the service closed the session (${code}${reason ? `: ${reason}` : ''})`);
  } finally {
    clearInterval(ping);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return { listenerId: session.listenerId, forwarded };
}

const listenCommand: Command = {
  path: ['webhooks', 'listen'],
  summary: "Forwards the account's events to a local URL, signed as for an endpoint (no tunnel), or prints them",
  flags: [
    {
      name: 'forward-to',
      type: 'string',
      value: 'URL',
      summary: 'Where to POST each event, e.g. http://localhost:3000/hooks; none: print each event here',
    },
    {
      name: 'events',
      type: 'list',
      value: 'TYPES',
      summary: "Event types (comma-separated or repeated); default: all the key's",
    },
  ],
  details: `The Worker delivers the events into a WebSocket this command holds; it never calls the local URL. Each
event arrives with the headers and body an endpoint gets (webhook-id, webhook-timestamp, webhook-signature),
signed with the session's secret printed at start. The local server's status is the delivery's answer: a non-2xx
is retried as for an endpoint. Without --forward-to, each event is printed whole and answered 200 here. Ctrl-C
ends the session; nothing stays registered.

  postcode webhooks listen --forward-to http://localhost:3000/hooks --events email.sent,email.bounced
  postcode webhooks listen --events email.received`,
  async run(ctx) {
    const summary = await listen(ctx);
    const { io } = ctx;
    if (modeOf(ctx.flags.boolean('json'), io.isTTY) === 'json')
      io.out(`${JSON.stringify({ stopped: true, ...summary })}\n`);
    else io.out(`Stopped after ${summary.forwarded} event(s).\n`);
    return { data: undefined };
  },
};

export const webhookCommands: Command[] = [listenCommand];
