// The floors of `npm run bench`: each route makes the hops its postcode endpoint cannot do without, in the
// cheapest form the platform offers, and nothing else (no validation, no envelope, no events).
//   GET  /bare        nothing (the same as postcode's GET /health)
//   POST /queue       credential (token hash, isolate cache) + 2 counter-object calls + the body put in R2
//                     + one call to the account's SQLite object (2 statements in its transaction) + a queue
//                     send                                           (POST /api/v1/emails)
//   POST /queue-framework  the same hops behind the fixed architecture: an OpenAPIHono route whose body is
//                     validated by postcode's own schema (queueEmailBody), answered with c.json. Not a floor:
//                     it tells the framework's share of queue-an-email's gap from postcode's own.
//   queue consumer    per batch one D1 read (the settings), one claim in the account's object and one SMTP
//                     connection; per mail its body read from R2, one SMTP exchange and one update in the
//                     account's object (postcode's consumer delivers in the same process while queue-an-email is
//                     measured, so the floor of that figure includes the floor of delivering)
//   POST /otp-send    credential + 1 counter-object call + a new SQLite object with one insert + one raw
//                     SMTP exchange, the handshake overlapping the object call (POST /api/v1/instant-otp/send)
//   POST /otp-verify  credential + one call to the session's object (read, compare, update) + one insert in
//                     the account's object                          (POST /api/v1/instant-otp/verify)
//   POST /rsa-sign    one RSASSA-PKCS1-v1_5 SHA-256 signature with a 2048-bit key made once per isolate: the
//                     part of a DKIM signature no implementation avoids (its CPU less /bare's)

import { connect } from 'cloudflare:sockets';
import { DurableObject } from 'cloudflare:workers';
import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { queuedResponse, queueEmailBody } from '../../../src/schemas/emails';

type Env = {
  DB: D1Database;
  ACCOUNT: DurableObjectNamespace<ProbeAccount>;
  BODIES: R2Bucket;
  QUEUE: Queue;
  COUNTER: DurableObjectNamespace<ProbeCounter>;
  RECIPIENT: DurableObjectNamespace<ProbeRecipient>;
  SMTP_HOST: string;
  SMTP_PORT: string;
};

/** In-memory sliding window, like postcode's counters of windows up to a minute. */
export class ProbeCounter extends DurableObject<Env> {
  private readonly hits: number[] = [];

  hit(limit: number, windowMs: number): { allowed: boolean; remaining: number } {
    const now = Date.now();
    while (this.hits.length > 0 && this.hits[0]! <= now - windowMs) this.hits.shift();
    if (this.hits.length >= limit) return { allowed: false, remaining: 0 };
    this.hits.push(now);
    return { allowed: true, remaining: limit - this.hits.length };
  }
}

/** One recipient's sessions in its own SQLite object. */
export class ProbeRecipient extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, code TEXT, state TEXT)');
  }

  start(id: string, code: string): void {
    this.ctx.storage.sql.exec("INSERT INTO sessions (id, code, state) VALUES (?, ?, 'pending')", id, code);
  }

  verify(id: string, code: string): boolean {
    const row = this.ctx.storage.sql
      .exec<{ code: string; state: string }>('SELECT code, state FROM sessions WHERE id = ?', id)
      .toArray()[0];
    if (row?.state !== 'pending' || row.code !== code) return false;
    this.ctx.storage.sql.exec("UPDATE sessions SET state = 'verified' WHERE id = ?", id);
    return true;
  }
}

/** One account's data in its own SQLite object: its mail, daily usage and OTP history. */
export class ProbeAccount extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    for (const statement of ACCOUNT_SCHEMA) ctx.storage.sql.exec(statement);
  }

  accept(id: string, day: string, to: string, subject: string): void {
    this.ctx.storage.transactionSync(() => {
      this.ctx.storage.sql.exec(
        'INSERT INTO usage (day, sent) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET sent = sent + 1',
        day,
      );
      this.ctx.storage.sql.exec('INSERT INTO emails (id, to_address, subject) VALUES (?, ?, ?)', id, to, subject);
    });
  }

  claim(ids: string[]): { id: string; to_address: string; subject: string }[] {
    return this.ctx.storage.sql
      .exec<{ id: string; to_address: string; subject: string }>(
        `UPDATE emails SET status = 'SENDING' WHERE id IN (SELECT value FROM json_each(?)) AND status IS NULL
         RETURNING id, to_address, subject`,
        JSON.stringify(ids),
      )
      .toArray();
  }

  sent(id: string): void {
    this.ctx.storage.sql.exec("UPDATE emails SET status = 'SENT' WHERE id = ?", id);
  }

  verified(sessionId: string, email: string): void {
    this.ctx.storage.sql.exec(
      'INSERT INTO verifications (id, email, verified_at) VALUES (?, ?, ?)',
      sessionId,
      email,
      Date.now(),
    );
  }
}

const ACCOUNT_SCHEMA = [
  'CREATE TABLE IF NOT EXISTS usage (day TEXT PRIMARY KEY, sent INTEGER NOT NULL)',
  'CREATE TABLE IF NOT EXISTS emails (id TEXT PRIMARY KEY, to_address TEXT, subject TEXT, status TEXT)',
  'CREATE TABLE IF NOT EXISTS verifications (id TEXT PRIMARY KEY, email TEXT, verified_at INTEGER)',
];

const credentials = new Map<string, string>();

/** postcode hashes the bearer token and finds the credential in an isolate cache. */
async function credential(request: Request): Promise<string> {
  const token = request.headers.get('Authorization') ?? '';
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)));
  const hash = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  let account = credentials.get(hash);
  if (!account) {
    account = `acc_${hash.slice(0, 8)}`;
    credentials.set(hash, account);
  }
  return account;
}

const json = (data: unknown) => Response.json(data);
const counter = (env: Env, name: string) => env.COUNTER.get(env.COUNTER.idFromName(name));
const accountObject = (env: Env, account: string) => env.ACCOUNT.get(env.ACCOUNT.idFromName(account));
const randomId = () => crypto.randomUUID().replaceAll('-', '');

/** The hops of queue-an-email once the body is read: counters, the body in R2, the account's object, the queue. */
async function queueHops(env: Env, account: string, ip: string, to: string, subject: string, text: string) {
  await Promise.all([counter(env, `key:${account}`).hit(1e9, 60_000), counter(env, `ip:${ip}`).hit(1e9, 60_000)]);
  const id = `em_${randomId()}`;
  await env.BODIES.put(id, text);
  await accountObject(env, account).accept(id, new Date().toISOString().slice(0, 10), to, subject);
  await env.QUEUE.send({ id, account }, { contentType: 'json' });
  return id;
}

async function queueEmail(request: Request, env: Env) {
  const account = await credential(request);
  const body = (await request.json()) as { to: string; subject: string; text: string };
  const ip = request.headers.get('CF-Connecting-IP') ?? '127.0.0.1';
  const id = await queueHops(env, account, ip, body.to, body.subject, body.text);
  return json({ success: true, data: { id, status: 'QUEUED' } });
}

/** /queue behind Hono and zod-openapi, with postcode's body schema and an error envelope like its own. */
const framework = new OpenAPIHono<{ Bindings: Env }>({
  defaultHook: (result, c) => {
    if (!result.success) {
      return c.json({ success: false, error: { code: 'INVALID_INPUT', message: result.error.message } }, 400);
    }
  },
});
framework.openapi(
  createRoute({
    method: 'post',
    path: '/queue-framework',
    request: { body: { content: { 'application/json': { schema: queueEmailBody } }, required: true } },
    responses: { 200: { description: 'Queued', content: { 'application/json': { schema: queuedResponse } } } },
  }),
  async (c) => {
    const body = c.req.valid('json');
    const account = await credential(c.req.raw);
    const ip = c.req.header('CF-Connecting-IP') ?? '127.0.0.1';
    const id = await queueHops(c.env, account, ip, body.to.join(','), body.subject ?? '', body.text ?? '');
    return c.json({ success: true as const, data: { id, status: 'QUEUED' as const } }, 200);
  },
);

/** A minimal SMTP client: commands written together where PIPELINING allows, replies read one by one. */
class Smtp {
  private buffer = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();

  constructor(private readonly socket: Socket) {
    this.reader = socket.readable.getReader();
    this.writer = socket.writable.getWriter();
  }

  async reply(): Promise<string> {
    for (;;) {
      const lines = this.buffer.split('\r\n');
      const last = lines.findIndex((line) => /^\d{3} /.test(line));
      if (last >= 0) {
        this.buffer = lines.slice(last + 1).join('\r\n');
        return lines[last]!;
      }
      const { value, done } = await this.reader.read();
      if (done) throw new Error('SMTP connection closed');
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  async command(line: string, expect: string): Promise<void> {
    await this.pipeline([[line, expect]]);
  }

  /** Writes the commands in one go, then reads and checks their replies in order. */
  async pipeline(commands: [line: string, expect: string][]): Promise<void> {
    await this.writer.write(this.encoder.encode(commands.map(([line]) => `${line}\r\n`).join('')));
    for (const [line, expect] of commands) {
      const reply = await this.reply();
      if (!reply.startsWith(expect)) throw new Error(`SMTP ${line.split(' ')[0]}: ${reply}`);
    }
  }

  close() {
    return this.socket.close();
  }
}

/** An SMTP connection past its greeting and EHLO. */
async function openSmtp(env: Env): Promise<Smtp> {
  const smtp = new Smtp(connect({ hostname: env.SMTP_HOST, port: Number(env.SMTP_PORT) }));
  if (!(await smtp.reply()).startsWith('220')) throw new Error('SMTP greeting');
  await smtp.command('EHLO probe.test', '250');
  return smtp;
}

/** One mail over an open connection: envelope, then the message with its Message-ID. */
async function sendMail(smtp: Smtp, to: string, messageId: string, subject: string, text: string): Promise<void> {
  // The sink offers PIPELINING (as postcode's client uses it): the envelope goes out in one write.
  await smtp.pipeline([
    ['MAIL FROM:<no-reply@probe.test>', '250'],
    [`RCPT TO:<${to}>`, '250'],
    ['DATA', '354'],
  ]);
  const message = [
    'From: <no-reply@probe.test>',
    `To: <${to}>`,
    `Subject: ${subject}`,
    `Message-ID: <${messageId}@probe.test>`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    text,
    '.',
  ].join('\r\n');
  await smtp.command(message, '250');
}

async function closeSmtp(smtp: Smtp): Promise<void> {
  await smtp.command('QUIT', '221').catch(() => undefined);
  await smtp.close().catch(() => undefined);
}

async function otpSend(request: Request, env: Env) {
  const account = await credential(request);
  const { email } = (await request.json()) as { email: string };
  // The handshake runs while the counter and the recipient's object are called.
  const handshake = openSmtp(env);
  await counter(env, `otp:${account}`).hit(1e9, 60_000);
  const objectId = env.RECIPIENT.idFromName(`${account}:${email}`);
  const sessionId = `${objectId.toString()}_${randomId()}`;
  const code = String(crypto.getRandomValues(new Uint32Array(1))[0]! % 1_000_000).padStart(6, '0');
  await env.RECIPIENT.get(objectId).start(sessionId, code);
  const smtp = await handshake;
  await sendMail(smtp, email, `probe.${sessionId}`, 'Your code', code);
  await closeSmtp(smtp);
  return json({ success: true, data: { sessionId, email, code, sent: true } });
}

async function otpVerify(request: Request, env: Env) {
  const account = await credential(request);
  const { sessionId, email, code } = (await request.json()) as { sessionId: string; email: string; code: string };
  const object = env.RECIPIENT.get(env.RECIPIENT.idFromString(sessionId.split('_')[0]!));
  // A failed verify is not 2xx, so the bench counts it (its table shows non-2xx answers).
  if (!(await object.verify(sessionId, code))) return Response.json({ success: false }, { status: 400 });
  await accountObject(env, account).verified(sessionId, email);
  return json({ success: true, data: { verified: true } });
}

/** A 2048-bit RSA key, made once per isolate (as postcode opens a domain's key once). */
let rsaKey: Promise<CryptoKey> | null = null;
const SIGNED_INPUT = new TextEncoder().encode('dkim-signature:'.padEnd(512, 'x'));

async function rsaSign(): Promise<Response> {
  rsaKey ??= (
    crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    ) as Promise<CryptoKeyPair>
  ).then((pair) => pair.privateKey);
  const signature = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', await rsaKey, SIGNED_INPUT);
  return json({ success: true, data: { bytes: (signature as ArrayBuffer).byteLength } });
}

/** The control plane's part: the settings the consumer reads per batch. */
const SCHEMA = [
  'CREATE TABLE IF NOT EXISTS settings (id INTEGER PRIMARY KEY, frozen INTEGER NOT NULL)',
  'INSERT OR IGNORE INTO settings (id, frozen) VALUES (1, 0)',
];

type ProbeJob = { id: string; account: string };

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (request.method === 'GET' && pathname === '/bare') return json({ success: true, data: { status: 'ok' } });
    if (request.method === 'POST' && pathname === '/queue') return queueEmail(request, env);
    if (pathname === '/queue-framework') return framework.fetch(request, env);
    if (request.method === 'POST' && pathname === '/otp-send') return otpSend(request, env);
    if (request.method === 'POST' && pathname === '/otp-verify') return otpVerify(request, env);
    if (request.method === 'POST' && pathname === '/rsa-sign') return rsaSign();
    if (request.method === 'POST' && pathname === '/setup') {
      await env.DB.batch(SCHEMA.map((statement) => env.DB.prepare(statement)));
      return json({ success: true });
    }
    return new Response('not found', { status: 404 });
  },
  /** Delivery's floor: the settings, the batch claimed in the account's object, one connection, each mail recorded. */
  async queue(batch: MessageBatch<ProbeJob>, env: Env): Promise<void> {
    await env.DB.prepare('SELECT frozen FROM settings WHERE id = 1').first();
    const byAccount = new Map<string, Message<ProbeJob>[]>();
    for (const m of batch.messages) byAccount.set(m.body.account, [...(byAccount.get(m.body.account) ?? []), m]);
    const smtp = await openSmtp(env);
    try {
      for (const [account, messages] of byAccount) {
        const object = accountObject(env, account);
        const mails = await object.claim(messages.map((m) => m.body.id));
        for (const mail of mails) {
          const body = (await (await env.BODIES.get(mail.id))?.text()) ?? '';
          await sendMail(smtp, mail.to_address, `probe.${mail.id}`, mail.subject, body);
          await object.sent(mail.id);
        }
      }
    } finally {
      await closeSmtp(smtp);
    }
    batch.ackAll();
  },
} satisfies ExportedHandler<Env, ProbeJob>;
