// Setting an SMTP session up against real servers: the EHLO name, HELO where EHLO is unknown, STARTTLS
// asked for and not offered, AUTH LOGIN (smtp-server) and AUTH PLAIN over TLS (maildev, the inbox of
// `npm start`), and what missing or wrong credentials come to.
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import type { SmtpConfig } from '../../../src/config';
import type { OutgoingMail } from '../../../src/mail/outgoing';
import { SmtpConnection } from '../../../src/mail/smtp/connection';
import { startConnecting } from '../../../src/mail/smtp/send-once';
import { uniqueAddress, waitForInbox } from '../../support/api';

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
