// A DNS-over-HTTPS resolver (JSON form) that answers what the tests publish, like the one `npm start` runs.
//   GET  /dns-query?name=<name>&type=TXT|MX   { Status, Answer: [{ name, type, TTL, data }] }; a TXT record's
//                                             data as quoted strings of at most 255 characters
//   POST /publish    { name, type, data: [...] }   replaces the records of that name and type
//   POST /unpublish  { name, type }
// Names under `servfail.` answer DNS status 2 (SERVFAIL); names under `http500.` an HTTP 500. A name with no
// published records of the type asked is answered from `fallback` when given (npm start: the records the
// service asks its demo account's domains to publish, so that pressing verify verifies).
import { createServer, type Server } from 'node:http';
import { type HttpFixture, listenOnLoopback } from './http-fixture';

const TYPES: Record<string, number> = { TXT: 16, MX: 15 };

const quoted = (text: string) => (text.match(/[\s\S]{1,255}/g) ?? ['']).map((part) => JSON.stringify(part)).join(' ');

/** The data of `name`'s records of `type` (MX as `priority host.`), or null for none. */
export type DnsFallback = (name: string, type: string) => Promise<string[] | null>;

export async function startDnsStub(fallback?: DnsFallback): Promise<HttpFixture> {
  const records = new Map<string, Map<string, string[]>>();
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'Content-Type': 'application/dns-json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && url.pathname === '/dns-query') {
      const name = (url.searchParams.get('name') ?? '').toLowerCase().replace(/\.$/, '');
      const type = url.searchParams.get('type') ?? '';
      if (name.startsWith('http500.')) return res.writeHead(500).end();
      if (name.startsWith('servfail.')) return json(200, { Status: 2 });
      const byType = records.get(name);
      const data = byType?.get(type) ?? (fallback ? await fallback(name, type).catch(() => null) : null) ?? [];
      if (!byType && data.length === 0) return json(200, { Status: 3 });
      const answer = data.map((value) => ({
        name: `${name}.`,
        type: TYPES[type],
        TTL: 300,
        data: type === 'TXT' ? quoted(value) : value,
      }));
      return json(200, { Status: 0, ...(answer.length > 0 ? { Answer: answer } : {}) });
    }
    if (req.method === 'POST' && (url.pathname === '/publish' || url.pathname === '/unpublish')) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        name: string;
        type: string;
        data?: string[];
      };
      const name = body.name.toLowerCase().replace(/\.$/, '');
      const byType = records.get(name) ?? new Map<string, string[]>();
      if (url.pathname === '/publish') byType.set(body.type, body.data ?? []);
      else byType.delete(body.type);
      if (byType.size > 0) records.set(name, byType);
      else records.delete(name);
      return res.writeHead(204).end();
    }
    res.writeHead(404).end();
  });
  return listenOnLoopback(server);
}
