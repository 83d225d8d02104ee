// Setting an SMTP session up against real servers: the EHLO name, HELO where EHLO is unknown, STARTTLS
// asked for and not offered, AUTH LOGIN (smtp-server) and AUTH PLAIN over TLS (maildev, the inbox of
// `npm start`), what missing or wrong credentials come to, and the QUIT owed to a server that refused a step
// (through relays that record each command: test/support/node/flaky-relay.ts).
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import type { SmtpConfig } from '../../../src/config';
import type { OutgoingMail } from '../../../src/mail/outgoing';
import { SmtpConnection } from '../../../src/mail/smtp/connection';
import { sendOnce, startConnecting } from '../../../src/mail/smtp/send-once';
import { eventually, uniqueAddress, waitForInbox } from '../../support/api';
import { newRelay, relayCommands } from '../../support/relays';

/** The credentials the AUTH servers take (test/support/node/global-setup.ts). */
const RELAY = { username: 'relay-user', password: 'pässwörd 1' };

const server = (port: string, more: Partial<SmtpConfig> = {}): SmtpConfig => ({
  host: '127.0.0.1',
  port: Number(port),
  security: 'none',
  ehloName: 'mail.postcode.test',
  timeoutMs: 5_000,
  ...more,
});

const mail = (to: string, subject = 'Session'): OutgoingMail => ({
  from: { email: 'sender@example.com', name: null },
  to: [to],
  subject,
  html: null,
  text: 'hello',
  messageId: `<${crypto.randomUUID()}@example.com>`,
});

const open: SmtpConnection[] = [];
async function connect(config: SmtpConfig): Promise<SmtpConnection> {
  const connection = await SmtpConnection.open(config);
  open.push(connection);
  return connection;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe('SmtpSession: EHLO and HELO', () => {
  it('greets with the configured name', async () => {
    const connection = await connect(server(env.SMTP_PORT));
    const to = uniqueAddress('ehlo');
    expect(await connection.send(mail(to))).toEqual({ kind: 'accepted', refused: [] });
    const [received] = await waitForInbox(to);
    expect(received!.helo).toBe('mail.postcode.test');
  });

  it('falls back to HELO where EHLO is unknown, and sends one command at a time', async () => {
    const connection = await connect(server(env.HELO_SMTP_PORT));
    expect(connection.pipelining).toBe(false);
    expect(await connection.send(mail(uniqueAddress('helo')))).toEqual({ kind: 'accepted', refused: [] });
  });
});

describe('SmtpSession: STARTTLS', () => {
  it('asked for and not offered: refuses to go on in plaintext, before AUTH or any mail', async () => {
    const opening = SmtpConnection.open(server(env.LOCKSTEP_SMTP_PORT, { security: 'starttls', credentials: RELAY }));
    await expect(opening).rejects.toThrow(/does not offer STARTTLS \(SMTP_SECURE=starttls\): refusing/);
  });
});

describe('SmtpSession: AUTH', () => {
  it('AUTH LOGIN where it is the mechanism offered (UTF-8 password)', async () => {
    const connection = await connect(server(env.AUTH_SMTP_PORT, { credentials: RELAY }));
    const to = uniqueAddress('login');
    expect(await connection.send(mail(to))).toEqual({ kind: 'accepted', refused: [] });
    const [received] = await waitForInbox(to, 1, env.AUTH_INBOX_URL);
    expect(received!.user).toBe('relay-user');
  });

  it('AUTH PLAIN over TLS from the first byte: maildev takes the message', async () => {
    const connection = await connect(server(env.MAILDEV_SMTP_PORT, { security: 'tls', credentials: RELAY }));
    const to = uniqueAddress('maildev');
    const subject = `Through maildev ${crypto.randomUUID()}`;
    expect(await connection.send(mail(to, subject))).toEqual({ kind: 'accepted', refused: [] });
    const inbox = (await (await fetch(`${env.MAILDEV_URL}/email`)).json()) as {
      subject: string;
      envelope: { to: { address: string }[] };
    }[];
    const arrived = inbox.find((m) => m.subject === subject);
    expect(arrived?.envelope.to.map((t) => t.address)).toEqual([to]);
  });

  it('wrong credentials: the session is not set up, and a send through it is transient (the route failed)', async () => {
    const config = server(env.AUTH_SMTP_PORT, { credentials: { ...RELAY, password: 'wrong' } });
    await expect(SmtpConnection.open(config)).rejects.toThrow(/^authentication failed: 535/);
    expect(await startConnecting(config)).toMatchObject({ kind: 'transient', reply: expect.stringMatching(/535/) });
  });

  it('no credentials where the server requires them: 530 to MAIL FROM is transient, not the message failing', async () => {
    const connection = await connect(server(env.AUTH_SMTP_PORT));
    expect(await connection.send(mail(uniqueAddress('noauth')))).toMatchObject({
      kind: 'transient',
      reply: expect.stringMatching(/530/),
    });
  });
});

describe('SmtpSession: a refused step is answered with QUIT, a broken session is just dropped', () => {
  /** The commands of the relay's one connection, once it has sent `last` (QUIT comes after the failure). */
  const commandsEndingWith = (port: string, last: string) =>
    eventually(async () => {
      const [log] = await relayCommands(port);
      return log?.at(-1) === last ? log : undefined;
    }, `${last} at the relay on ${port}`);

  it.each([
    [
      'AUTH refused (535)',
      () => newRelay('ok', env.AUTH_SMTP_PORT),
      { credentials: { ...RELAY, password: 'wrong' } },
      /^authentication failed: 535/,
      ['EHLO', 'AUTH', 'QUIT'],
    ],
    ['EHLO and HELO refused (550)', () => newRelay('ehlo550'), {}, /^HELO refused: 550/, ['EHLO', 'HELO', 'QUIT']],
    [
      'STARTTLS refused (454)',
      () => newRelay('starttls454'),
      { security: 'starttls' as const },
      /^STARTTLS refused: 454/,
      ['EHLO', 'STARTTLS', 'QUIT'],
    ],
    [
      'STARTTLS asked for and not offered',
      () => newRelay('ok', env.LOCKSTEP_SMTP_PORT),
      { security: 'starttls' as const },
      /does not offer STARTTLS/,
      ['EHLO', 'QUIT'],
    ],
  ])('%s: QUIT before the socket goes', async (_, relay, more, error, commands) => {
    const port = await relay();
    await expect(SmtpConnection.open(server(port, more))).rejects.toThrow(error);
    expect(await commandsEndingWith(port, 'QUIT')).toEqual(commands);
  });

  it('530 to MAIL FROM (no credentials): RSET, then QUIT', async () => {
    const port = await newRelay('ok', env.AUTH_SMTP_PORT);
    expect(await sendOnce(server(port), mail(uniqueAddress('noauth')))).toMatchObject({
      kind: 'transient',
      reply: expect.stringMatching(/530/),
    });
    expect((await commandsEndingWith(port, 'QUIT')).slice(-2)).toEqual(['RSET', 'QUIT']);
  });

  it.each([
    ['a 421 greeting (the server is closing)', () => newRelay('421'), {}, /refused the session: 421/, []],
    [
      'plaintext after the 220 to STARTTLS (out of step)',
      () => newRelay('ok', env.LENIENT_SMTP_PORT),
      { security: 'starttls' as const },
      /sent more after its 220 to STARTTLS/,
      ['EHLO', 'STARTTLS'],
    ],
    ['no greeting (a timeout)', () => newRelay('silent'), { timeoutMs: 300 }, /^timeout after 300 ms/, []],
  ])('%s: no QUIT', async (_, relay, more, error, commands) => {
    const port = await relay();
    await expect(SmtpConnection.open(server(port, more))).rejects.toThrow(error);
    // Long enough for a QUIT sent after the failure to reach the relay.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await relayCommands(port)).toEqual([commands]);
  });
});
