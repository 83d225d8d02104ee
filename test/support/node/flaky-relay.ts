// Relays whose health a test sets, for delivery routes' failover and breaker (test/mail/routes.test.ts) and the
// SMTP client's manners (test/mail/smtp/session.test.ts): a TCP front that, by mode, passes the connection
// through to a real SMTP server (`ok`: the relay's own sink, or the server it was made for), resets it at once
// (`reset`), greets with 421 and hangs up (`421`), says nothing (`silent`), refuses it (`refused`: nothing
// listens on its port), or answers itself and refuses a step of the handshake (`ehlo550`: EHLO and HELO;
// `starttls454`: STARTTLS). It records the commands each connection sent (their verbs, never message lines).
//
// Its HTTP API: POST /mode?m=… and GET /stats (connections per mode) drive the shared relay; POST
// /relays?m=…[&upstream=port] makes a relay of the caller's own (its port as JSON), driven by POST
// /relays/<port>/mode?m=…, GET /relays/<port>/stats and GET /relays/<port>/commands (one list per
// connection). Tests that run at once never share one that way. `downPort` is a port nothing listens on.
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { startSmtpSink } from './smtp-sink';

export type RelayMode = 'ok' | 'reset' | '421' | 'silent' | 'refused' | 'ehlo550' | 'starttls454';
const MODES: RelayMode[] = ['ok', 'reset', '421', 'silent', 'refused', 'ehlo550', 'starttls454'];

const VERBS = new Set(['EHLO', 'HELO', 'STARTTLS', 'AUTH', 'MAIL', 'RCPT', 'DATA', 'BDAT', 'RSET', 'NOOP', 'QUIT']);

const listen = (server: Server | ReturnType<typeof createHttpServer>, port = 0) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });

/** The verbs of the command lines in a client's bytes; `skip` says whether a line is message content. */
function commandLog(into: string[], skip: () => boolean) {
  let buffer = '';
  return (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    for (let eol = buffer.indexOf('\r\n'); eol !== -1; eol = buffer.indexOf('\r\n')) {
      const line = buffer.slice(0, eol);
      buffer = buffer.slice(eol + 2);
      const verb = line.split(' ')[0]!.toUpperCase();
      if (!skip() && VERBS.has(verb)) into.push(verb);
    }
  };
}

/** The front's own answers in `ehlo550` and `starttls454` (everything else: 250). */
function scripted(socket: Socket, mode: RelayMode, log: string[]) {
  socket.write('220 relay ESMTP\r\n');
  let buffer = '';
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    for (let eol = buffer.indexOf('\r\n'); eol !== -1; eol = buffer.indexOf('\r\n')) {
      const verb = buffer.slice(0, eol).split(' ')[0]!.toUpperCase();
      buffer = buffer.slice(eol + 2);
      if (VERBS.has(verb)) log.push(verb);
      if (verb === 'QUIT') return socket.end('221 2.0.0 bye\r\n');
      if ((verb === 'EHLO' || verb === 'HELO') && mode === 'ehlo550') socket.write(`550 5.7.1 ${verb} refused\r\n`);
      else if (verb === 'EHLO') socket.write('250-relay\r\n250-STARTTLS\r\n250 AUTH PLAIN LOGIN\r\n');
      else if (verb === 'STARTTLS') socket.write('454 4.7.0 TLS not available due to local problem\r\n');
      else socket.write('250 2.0.0 ok\r\n');
    }
  });
}

/** One relay: a front on its own port, passing `ok` connections to `upstreamPort`. */
async function startRelay(upstreamPort: number, initial: RelayMode = 'ok') {
  let mode: RelayMode = 'ok';
  const stats = Object.fromEntries(MODES.map((m) => [m, 0])) as Record<RelayMode, number>;
  const commands: string[][] = [];
  const sockets = new Set<Socket>();
  const front = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    stats[mode] += 1;
    const log: string[] = [];
    commands.push(log);
    if (mode === 'reset') socket.resetAndDestroy();
    else if (mode === '421') {
      socket.on(
        'data',
        commandLog(log, () => false),
      );
      socket.end('421 4.3.2 Service shutting down, try another relay\r\n');
    } else if (mode === 'silent')
      socket.on(
        'data',
        commandLog(log, () => false),
      );
    else if (mode === 'ehlo550' || mode === 'starttls454') scripted(socket, mode, log);
    else {
      // Lines after the server's 354 are the message, up to the lone ".".
      let inData = false;
      const record = commandLog(log, () => inData);
      const upstream = connect(upstreamPort, '127.0.0.1');
      upstream.on('error', () => socket.destroy());
      socket.on('close', () => upstream.destroy());
      socket.on('data', (chunk: Buffer) => {
        record(chunk);
        if (inData && /(^|\r\n)\.\r\n/.test(chunk.toString('latin1'))) inData = false;
      });
      upstream.on('data', (chunk: Buffer) => {
        if (/(^|\r\n)354[ -]/.test(chunk.toString('latin1'))) inData = true;
      });
      socket.pipe(upstream).pipe(socket);
    }
  });
  const port = await listen(front);
  const setMode = async (next: RelayMode) => {
    // `refused`: the port stays this relay's, with no listener on it.
    if (next === 'refused' && mode !== 'refused') await new Promise<void>((resolve) => front.close(() => resolve()));
    if (next !== 'refused' && mode === 'refused') await listen(front, port);
    mode = next;
    for (const key of MODES) stats[key] = 0;
  };
  await setMode(initial);
  return {
    port,
    setMode,
    stats: () => stats,
    commands: () => commands,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      if (mode !== 'refused') await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}

type Relay = Awaited<ReturnType<typeof startRelay>>;

export async function startFlakyRelay() {
  const sink = await startSmtpSink();
  const shared = await startRelay(sink.smtpPort);
  const own = new Map<number, Relay>();

  const control = createHttpServer((request, response) => {
    // A connection kept alive can be closed by the server as the next POST goes out on it (a reset nobody
    // retries): one request per connection.
    response.setHeader('connection', 'close');
    answer(request, response).catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  });
  const answer = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://relay');
    const json = (value: unknown) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(value));
    };
    const [, first, portText, action] = url.pathname.split('/');
    const relay = first === 'relays' && portText ? own.get(Number(portText)) : first === 'relays' ? null : shared;
    const what = first === 'relays' ? action : first;
    const mode = url.searchParams.get('m') as RelayMode | null;
    if (mode !== null && !MODES.includes(mode)) {
      response.statusCode = 400;
      return response.end(`unknown mode ${mode}`);
    }
    if (request.method === 'POST' && first === 'relays' && !portText) {
      const upstream = Number(url.searchParams.get('upstream') ?? sink.smtpPort);
      const made = await startRelay(upstream, mode ?? 'ok');
      own.set(made.port, made);
      return json({ port: made.port });
    }
    if (!relay) {
      response.statusCode = 404;
      return response.end();
    }
    if (request.method === 'POST' && what === 'mode' && mode !== null) {
      await relay.setMode(mode);
      return response.end('ok');
    }
    if (what === 'stats') return json(relay.stats());
    if (what === 'commands') return json(relay.commands());
    response.statusCode = 404;
    response.end();
  };
  const controlPort = await listen(control);

  // A port that was free a moment ago and has no listener: connecting to it is refused.
  const probe = createServer();
  const downPort = await listen(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  return {
    port: shared.port,
    downPort,
    controlUrl: `http://127.0.0.1:${controlPort}`,
    inboxUrl: sink.inboxUrl,
    close: async () => {
      await Promise.all([shared, ...own.values()].map((relay) => relay.close()));
      await new Promise<void>((resolve) => control.close(() => resolve()));
      await sink.close();
    },
  };
}
