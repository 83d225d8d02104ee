// A real webhook receiver for the test run: it verifies every delivery's signature with the
// `standardwebhooks` verify function (the secrets a test registered for its path) and answers as told:
// 2xx, 500, not at all (to make the sender time out), or with a body that never ends, optionally failing only
// the first N requests, with a body when told.
//   POST /hooks/<key>        a delivery
//   PUT  /control/<key>      { secrets?: string[], mode?: 'ok' | '500' | 'hang' | 'stall', failFirst?: number,
//                              body?: string }
//   GET  /control/<key>      what arrived: [{ webhookId, timestamp, signatureValid, payload, answered }]
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { type HttpFixture, listenOnLoopback } from './http-fixture';

export type ReceivedWebhook = {
  webhookId: string;
  timestamp: string;
  signatureValid: boolean;
  payload: unknown;
  raw: string;
  answered: number | null;
};

type Control = {
  secrets: string[];
  mode: 'ok' | '500' | 'hang' | 'stall';
  failFirst: number;
  body: string;
  received: ReceivedWebhook[];
};

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

function verifies(secrets: string[], raw: string, headers: Record<string, string>): boolean {
  return secrets.some((secret) => {
    try {
      new Webhook(secret).verify(raw, headers);
      return true;
    } catch {
      return false;
    }
  });
}

export async function startWebhookReceiver(): Promise<HttpFixture> {
  const controls = new Map<string, Control>();
  const control = (key: string) => {
    let found = controls.get(key);
    if (!found) {
      found = { secrets: [], mode: 'ok', failFirst: 0, body: '', received: [] };
      controls.set(key, found);
    }
    return found;
  };
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [, area, key] = url.pathname.split('/');
    const raw = await readBody(req);
    if (!key) return res.writeHead(404).end();
    const state = control(key);
    if (area === 'control' && req.method === 'PUT') {
      Object.assign(state, JSON.parse(raw || '{}'));
      return res.writeHead(204).end();
    }
    if (area === 'control') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(state.received));
    }
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    let payload: unknown = null;
    try {
      payload = JSON.parse(raw);
    } catch {}
    const entry: ReceivedWebhook = {
      webhookId: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signatureValid: verifies(state.secrets, raw, headers),
      payload,
      raw,
      answered: null,
    };
    state.received.push(entry);
    if (state.mode === 'hang') return; // never answer: the sender's timeout decides
    const fail = state.mode === '500' || state.failFirst > 0;
    if (state.failFirst > 0) state.failFirst--;
    entry.answered = fail ? 500 : state.body ? 200 : 204;
    res.writeHead(entry.answered, state.body ? { 'Content-Type': 'text/plain; charset=utf-8' } : {});
    if (state.mode === 'stall') return void res.write(state.body); // the body's start, then nothing more
    res.end(state.body);
  });
  return listenOnLoopback(server);
}
