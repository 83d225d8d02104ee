// Files for attachment `path`s: what an account's own web server would serve.
//   GET /files/<n>       n bytes of a fixed pattern (byte i is (31 i + 7) mod 256), application/octet-stream
//   GET /status/<code>   an empty answer with that status (404, 500, 302 to /files/1)
//   GET /corpus/<name>   a vendored real-world bounce, byte for byte (test/corpus/sisimai/maildir)
//   GET /corpus-not/<name>  a vendored real message that is no bounce (test/corpus/sisimai/not)
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { type HttpFixture, listenOnLoopback } from './http-fixture';

/** The bytes /files/<n> serves (tests compare what arrived with these). */
export function patternBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (31 * i + 7) & 255;
  return bytes;
}

export async function startFileServer(): Promise<HttpFixture> {
  const server: Server = createServer((req, res) => {
    const [, area, value] = new URL(req.url ?? '/', 'http://localhost').pathname.split('/');
    if (area === 'files' && /^\d{1,9}$/.test(value ?? '')) {
      const bytes = patternBytes(Number(value));
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(bytes.length) });
      return res.end(bytes);
    }
    if (area === 'status' && /^\d{3}$/.test(value ?? '')) {
      return res.writeHead(Number(value), value === '302' ? { Location: '/files/1' } : {}).end();
    }
    if ((area === 'corpus' || area === 'corpus-not') && /^[a-z0-9-]+\.eml$/.test(value ?? '')) {
      const folder = area === 'corpus' ? 'maildir' : 'not';
      return void readFile(new URL(`../../corpus/sisimai/${folder}/${value}`, import.meta.url)).then(
        (bytes) => res.writeHead(200, { 'Content-Type': 'message/rfc822' }).end(bytes),
        () => res.writeHead(404).end(),
      );
    }
    res.writeHead(404).end();
  });
  return listenOnLoopback(server);
}
