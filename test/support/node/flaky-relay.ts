// A relay whose health a test sets, for delivery routes' failover (test/mail/routes.test.ts): a TCP front
// that, by mode, passes the connection through to a real SMTP sink of its own (`ok`), resets it at once
// (`reset`), greets with 421 and hangs up (`421`), or says nothing (`silent`). Its HTTP API sets the mode
// (POST /mode?m=…) and counts the connections each mode took (GET /stats). `downPort` is a port nothing
// listens on (connection refused).
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { startSmtpSink } from './smtp-sink';

export type RelayMode = 'ok' | 'reset' | '421' | 'silent';

const listen = (server: Server | ReturnType<typeof createHttpServer>) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

export async function startFlakyRelay() {
  const sink = await startSmtpSink();
  let mode: RelayMode = 'ok';
  const stats: Record<RelayMode, number> = { ok: 0, reset: 0, '421': 0, silent: 0 };
  const sockets = new Set<Socket>();
  const front = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    stats[mode] += 1;
    if (mode === 'reset') socket.resetAndDestroy();
    else if (mode === '421') socket.end('421 4.3.2 Service shutting down, try another relay\r\n');
    else if (mode === 'ok') {
      const upstream = connect(sink.smtpPort, '127.0.0.1');
      upstream.on('error', () => socket.destroy());
      socket.on('close', () => upstream.destroy());
      socket.pipe(upstream).pipe(socket);
    }
  });
  const port = await listen(front);

  const control = createHttpServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://relay');
    if (request.method === 'POST' && url.pathname === '/mode') {
      mode = url.searchParams.get('m') as RelayMode;
      for (const key of Object.keys(stats) as RelayMode[]) stats[key] = 0;
      response.end('ok');
    } else if (url.pathname === '/stats') {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(stats));
    } else {
      response.statusCode = 404;
      response.end();
    }
  });
  const controlPort = await listen(control);

  // A port that was free a moment ago and has no listener: connecting to it is refused.
  const probe = createServer();
  const downPort = await listen(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  return {
    port,
    downPort,
    controlUrl: `http://127.0.0.1:${controlPort}`,
    inboxUrl: sink.inboxUrl,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      await new Promise<void>((resolve) => control.close(() => resolve()));
      await sink.close();
    },
  };
}
