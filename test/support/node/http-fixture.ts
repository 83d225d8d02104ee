// An HTTP fixture server on a free port of 127.0.0.1, and the way to stop it with its open connections.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HttpFixture = { url: string; close(): Promise<void> };

export async function listenOnLoopback(server: Server): Promise<HttpFixture> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
