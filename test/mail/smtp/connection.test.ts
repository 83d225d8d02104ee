// Messages over the SMTP client against real servers: smtp-server with PIPELINING offered and with no
// extensions, behind STARTTLS and implicit TLS, and a lenient server with scripted faults. Setting the
// session up (EHLO, HELO, STARTTLS, AUTH, maildev) is in session.test.ts.
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import type { SmtpConfig } from '../../../src/config';
import type { OutgoingMail } from '../../../src/mail/outgoing';
import { SmtpConnection } from '../../../src/mail/smtp/connection';
import { uniqueAddress, waitForInbox } from '../../support/api';

type Security = SmtpConfig['security'];

const server = (port: string, security: Security = 'none'): SmtpConfig => ({
  host: '127.0.0.1',
  port: Number(port),
  security,
  ehloName: 'mail.postcode.test',
  timeoutMs: 5_000,
});

const mail = (to: string[], from = 'sender@example.com'): OutgoingMail => ({
  from: { email: from, name: null },
  to,
  subject: 'Pipelining',
  html: null,
  text: 'hello',
  messageId: `<${crypto.randomUUID()}@example.com>`,
});

const open: SmtpConnection[] = [];
async function connect(port: string, security: Security = 'none'): Promise<SmtpConnection> {
  const connection = await SmtpConnection.open(server(port, security));
  open.push(connection);
  return connection;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const pipelining = (connection: SmtpConnection) => connection.pipelining;

const SERVERS = [
  { name: 'PIPELINING offered', port: () => env.SMTP_PORT, inbox: () => env.INBOX_URL, pipelined: true },
  {
    name: 'no PIPELINING, 8BITMIME or SMTPUTF8',
    port: () => env.LOCKSTEP_SMTP_PORT,
    inbox: () => env.LOCKSTEP_INBOX_URL,
    pipelined: false,
  },
  // Both offer PIPELINING after the upgrade; the certificate is signed by the run's test CA.
  {
    name: 'STARTTLS',
    port: () => env.STARTTLS_SMTP_PORT,
    inbox: () => env.STARTTLS_INBOX_URL,
    pipelined: true,
    security: 'starttls' as Security,
  },
  {
    name: 'TLS from the first byte',
    port: () => env.TLS_SMTP_PORT,
    inbox: () => env.TLS_INBOX_URL,
    pipelined: true,
    security: 'tls' as Security,
  },
];

describe.each(SERVERS)('SmtpConnection.send, $name', ({ port, inbox, pipelined, security }) => {
  const delivered = (to: string, count = 1) => waitForInbox(to, count, inbox());

  it('delivers to every recipient, and several messages over one connection', async () => {
    const connection = await connect(port(), security);
    expect(pipelining(connection)).toBe(pipelined);
    const [a, b] = [uniqueAddress('good'), uniqueAddress('good')];
    expect(await connection.send(mail([a, b]))).toEqual({ kind: 'accepted', refused: [] });
    expect(await connection.send(mail([a]))).toEqual({ kind: 'accepted', refused: [] });
    expect(await delivered(a, 2)).toHaveLength(2);
    expect((await delivered(b))[0]!.envelopeTo.sort()).toEqual([a, b].map((x) => x.toLowerCase()).sort());
  });

  it('one refused recipient: the others get the message, and the connection stays in step', async () => {
    const connection = await connect(port(), security);
    const [good, refused] = [uniqueAddress('good'), uniqueAddress('reject550')];
    const outcome = await connection.send(mail([refused, good]));
    expect(outcome).toEqual({
      kind: 'accepted',
      refused: [{ email: refused, reply: expect.stringMatching(/^550 /), permanent: true }],
    });
    expect((await delivered(good))[0]!.envelopeTo).toEqual([good.toLowerCase()]);
    const next = uniqueAddress('good');
    expect(await connection.send(mail([next]))).toEqual({ kind: 'accepted', refused: [] });
    await delivered(next);
  });

  it('every recipient refused: permanent, nothing sent, and the next message goes through', async () => {
    const connection = await connect(port(), security);
    const refused = [uniqueAddress('reject550'), uniqueAddress('reject550')];
    const outcome = await connection.send(mail(refused));
    expect(outcome.kind).toBe('permanent');
    expect(outcome.refused?.map((r) => r.email)).toEqual(refused);
    const next = uniqueAddress('good');
    expect(await connection.send(mail([next]))).toEqual({ kind: 'accepted', refused: [] });
    await delivered(next);
  });

  it('a transient refusal at RCPT TO makes the outcome transient', async () => {
    const connection = await connect(port(), security);
    const busy = uniqueAddress('rcpt451');
    const outcome = await connection.send(mail([busy]));
    expect(outcome).toEqual({
      kind: 'transient',
      reply: expect.stringMatching(/^451 /),
      refused: [{ email: busy, reply: expect.stringMatching(/^451 /), permanent: false }],
    });
  });

  it('a refused sender: permanent with the reply to MAIL FROM, and the next message goes through', async () => {
    const connection = await connect(port(), security);
    const outcome = await connection.send(mail([uniqueAddress('good')], 'mailfrom550@example.com'));
    expect(outcome).toEqual({ kind: 'permanent', reply: expect.stringMatching(/MAIL FROM.*550/), refused: [] });
    const next = uniqueAddress('good');
    expect(await connection.send(mail([next]))).toEqual({ kind: 'accepted', refused: [] });
    await delivered(next);
  });

  it('451 after DATA: transient', async () => {
    const connection = await connect(port(), security);
    const outcome = await connection.send(mail([uniqueAddress('tempfail-always')]));
    expect(outcome).toMatchObject({ kind: 'transient', reply: expect.stringMatching(/451/) });
  });
});

describe('SmtpConnection, a pipelining server with scripted faults (lenient)', () => {
  it('a 354 after every RCPT TO was refused: ends the empty message, reports the refusals, stays in step', async () => {
    const connection = await connect(env.LENIENT_SMTP_PORT);
    expect(pipelining(connection)).toBe(true);
    const refused = uniqueAddress('reject550');
    const outcome = await connection.send(mail([refused]));
    expect(outcome).toMatchObject({ kind: 'permanent', refused: [{ email: refused, permanent: true }] });
    expect(await connection.send(mail([uniqueAddress('good')]))).toEqual({ kind: 'accepted', refused: [] });
  });

  it('DATA refused: permanent with its reply, and the next message goes through', async () => {
    const connection = await connect(env.LENIENT_SMTP_PORT);
    const outcome = await connection.send(mail([uniqueAddress('good')], 'nodata@example.com'));
    expect(outcome).toEqual({ kind: 'permanent', reply: expect.stringMatching(/DATA.*554/), refused: [] });
    expect(await connection.send(mail([uniqueAddress('good')]))).toEqual({ kind: 'accepted', refused: [] });
  });

  it('a server that refuses the sender and hangs up: the refusal decides (permanent), not the closed connection', async () => {
    const connection = await connect(env.LENIENT_SMTP_PORT);
    const outcome = await connection.send(mail([uniqueAddress('good')], 'hangup550@example.com'));
    expect(outcome).toEqual({ kind: 'permanent', reply: expect.stringMatching(/MAIL FROM.*550/), refused: [] });
  });

  it('a server that goes quiet after the message: transient once the time of the exchange is up', async () => {
    const connection = await SmtpConnection.open({ ...server(env.LENIENT_SMTP_PORT), timeoutMs: 500 });
    open.push(connection);
    const started = Date.now();
    const outcome = await connection.send(mail([uniqueAddress('good')], 'silentdata@example.com'));
    // A silent server is the route's fault: the next route may take the message.
    expect(outcome).toEqual({
      kind: 'transient',
      reply: 'timeout after 500 ms while sending',
      refused: [],
      routeFault: true,
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    // The session is out of step now: the connection says so instead of sending into it.
    expect(connection.usable).toBe(false);
    expect(await connection.send(mail([uniqueAddress('good')]))).toMatchObject({
      kind: 'transient',
      reply: expect.stringMatching(/closed after a failure/),
    });
  });

  it('a message larger than the SIZE the server names: permanent, not sent, and the next one goes through', async () => {
    const connection = await connect(env.LENIENT_SMTP_PORT);
    const big = { ...mail([uniqueAddress('good')]), text: 'x'.repeat(200_000) };
    expect(await connection.send(big)).toEqual({
      kind: 'permanent',
      reply: expect.stringMatching(/^552 5\.3\.4 the message \(about \d+ bytes\) is larger than .*SIZE 100000/),
      refused: [],
    });
    expect(await connection.send(mail([uniqueAddress('good')]))).toEqual({ kind: 'accepted', refused: [] });
  });

  it('STARTTLS answered with more than its 220: the connection is refused before anything else is read', async () => {
    const opening = SmtpConnection.open({ ...server(env.LENIENT_SMTP_PORT), security: 'starttls' });
    await expect(opening).rejects.toThrow(/after its 220 to STARTTLS/);
  });
});

describe('SmtpConnection.open', () => {
  it('a server that accepts the connection but never greets: a timeout once the time of the handshake is up', async () => {
    const started = Date.now();
    const opening = SmtpConnection.open({ ...server(env.SILENT_SMTP_PORT), timeoutMs: 300 });
    await expect(opening).rejects.toThrow('timeout after 300 ms while connecting');
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});
