// maildev, the inbox of `npm start`, as one more server the SMTP client must deliver to: here with TLS from
// the first byte (the run's test certificate) and AUTH required, as a relay with credentials would be.
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';

export type Maildev = { smtpPort: number; webUrl: string; close(): Promise<void> };

/** A port nobody listens on right now (maildev takes fixed ports). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startMaildev(credentials: { username: string; password: string }): Promise<Maildev> {
  const [smtpPort, webPort] = [await freePort(), await freePort()];
  const bin = join(createRequire(import.meta.url).resolve('maildev/package.json'), '../bin/maildev');
  const tls = join(import.meta.dirname, 'tls');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      bin,
      ...['--smtp', String(smtpPort), '--web', String(webPort), '--ip', '127.0.0.1', '--silent'],
      ...['--incoming-secure', '--incoming-cert', join(tls, 'server.pem'), '--incoming-key', join(tls, 'server.key')],
      ...['--incoming-user', credentials.username, '--incoming-pass', credentials.password],
    ],
    { stdio: 'ignore' },
  );
  const webUrl = `http://127.0.0.1:${webPort}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${webUrl}/email`)).ok) break;
    } catch {}
    if (i >= 100 || child.exitCode !== null) throw new Error('maildev did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    smtpPort,
    webUrl,
    close: async () => {
      child.kill();
    },
  };
}
