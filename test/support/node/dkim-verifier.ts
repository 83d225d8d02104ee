// A DKIM verifier that postcode did not write: mailauth's, behind HTTP for the tests inside workerd.
//   POST /verify  { message, records: { "<selector>._domainkey.<domain>": "v=DKIM1; k=rsa; p=…" } }
//                 → { results: [{ result, comment, domain, selector }] }, the TXT records answered from `records`
import { createServer, type Server } from 'node:http';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { type HttpFixture, listenOnLoopback } from './http-fixture';

type VerifyRequest = { message: string; records: Record<string, string> };

async function verify({ message, records }: VerifyRequest) {
  const resolver = async (name: string, type: string) => {
    const record = records[name];
    if (type !== 'TXT' || record === undefined)
      throw Object.assign(new Error(`no ${type} ${name}`), { code: 'ENOTFOUND' });
    // TXT answers come in strings of at most 255 characters, as DNS carries them.
    return [record.match(/.{1,255}/g) ?? ['']];
  };
  // Strict: a body hash that does not verify is "fail" (RFC 6376 6.1.3, RFC 8601), not the lenient "neutral".
  const verified = await dkimVerify(Buffer.from(message), { resolver, strict: true });
  return verified.results.map((r) => ({
    result: r.status.result,
    comment: r.status.comment ?? null,
    domain: r.signingDomain ?? null,
    selector: r.selector ?? null,
  }));
}

export async function startDkimVerifier(): Promise<HttpFixture> {
  const server: Server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/verify') return res.writeHead(404).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      const results = await verify(JSON.parse(Buffer.concat(chunks).toString('utf8')) as VerifyRequest);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ results }));
    } catch (error) {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(error));
    }
  });
  return listenOnLoopback(server);
}
