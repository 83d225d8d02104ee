// A real SMTP server for the test run (smtp-server), with faults scripted by recipient address, and a
// small HTTP API the tests (running inside workerd) use to read what arrived.
//
// Recipient local parts that script a fault (the rest of the address keeps tests apart):
//   reject550.*        550 on RCPT TO (permanent)
//   rcpt451.*          451 on RCPT TO (transient, for this recipient only)
//   tempfail-once.*    451 after DATA the first time this exact address is seen, then accepted
//   tempfail-always.*  451 after DATA every time
//   drop-once.*        the connection is dropped after DATA the first time (no reply)
// A sender whose local part starts with mailfrom550 is refused at MAIL FROM (550).
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export type ReceivedMail = {
  envelopeFrom: string;
  envelopeTo: string[];
  messageId: string | null;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string | null;
  /** The message as it crossed the wire (after the DATA dot-unstuffing), to check header lines. */
  raw: string;
  /** The name the client gave in EHLO (or HELO). */
  helo: string;
  /** The user the client authenticated as (AUTH), or null. */
  user: string | null;
  receivedAt: string;
};

export type SmtpSink = { smtpPort: number; inboxUrl: string; close(): Promise<void> };

/** A server that accepts TCP connections and never says a word (no SMTP greeting). */
export async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A server that offers PIPELINING and answers DATA with 354 even when every RCPT TO was refused (RFC 2920
 * lets a server do so; smtp-server answers 503). It refuses recipients whose local part starts with
 * reject550 and takes every message. Senders script other faults: nodata* gets 554 to DATA, hangup550*
 * gets 550 to MAIL FROM and the connection closed, silentdata* gets no answer to its message (the server
 * goes quiet mid-exchange). It offers STARTTLS and answers it with a 220 followed
 * by an injected plaintext reply (no TLS ever starts), and takes messages up to SIZE 100000. With
 * `ehlo: false` it is an old server: EHLO is an unknown command, HELO is answered, no extension is offered.
 */
export async function startLenientServer({ ehlo = true } = {}): Promise<{ port: number; close(): Promise<void> }> {
  const server = createNetServer((socket) => {
    let buffer = '';
    let inData = false;
    let noData = false;
    let silentData = false;
    socket.on('error', () => undefined);
    socket.write('220 lenient ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      let replies = '';
      for (;;) {
        if (inData) {
          const end = buffer.startsWith('.\r\n') ? 0 : buffer.indexOf('\r\n.\r\n');
          if (end === -1) break;
          buffer = buffer.slice(end === 0 ? 3 : end + 5);
          inData = false;
          if (!silentData) replies += '250 taken\r\n';
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol === -1) break;
        const line = buffer.slice(0, eol).toUpperCase();
        buffer = buffer.slice(eol + 2);
        if (line.startsWith('EHLO') && !ehlo) replies += '502 5.5.1 command not recognized\r\n';
        else if (line.startsWith('EHLO'))
          replies += '250-lenient\r\n250-SIZE 100000\r\n250-STARTTLS\r\n250 PIPELINING\r\n';
        else if (line === 'STARTTLS') replies += '220 go ahead\r\n250-injected\r\n250 PIPELINING\r\n';
        else if (line.startsWith('MAIL') && line.includes('<HANGUP550'))
          return socket.end(`${replies}550 5.7.1 go away\r\n`);
        else if (line.startsWith('MAIL')) {
          noData = line.includes('<NODATA');
          silentData = line.includes('<SILENTDATA');
          replies += '250 ok\r\n';
        } else if (line.startsWith('RCPT') && line.includes('<REJECT550')) replies += '550 5.1.1 no such user\r\n';
        else if (line === 'DATA' && noData) replies += '554 5.3.4 no message today\r\n';
        else if (line === 'DATA') {
          inData = true;
          replies += '354 go ahead\r\n';
        } else if (line === 'QUIT') return socket.end(`${replies}221 bye\r\n`);
        else replies += '250 ok\r\n';
      }
      if (replies) socket.write(replies);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * `plain: true` offers none of PIPELINING, 8BITMIME and SMTPUTF8, so clients send one command per round
 * trip. `tls` offers STARTTLS with that key and certificate, or with `implicit` speaks TLS from the first
 * byte. `auth` requires AUTH with these mechanisms and credentials (over plaintext too: tests only).
 */
export async function startSmtpSink({
  plain = false,
  tls,
  auth,
}: {
  plain?: boolean;
  tls?: { key: Buffer; cert: Buffer; implicit: boolean };
  auth?: { methods: string[]; username: string; password: string };
} = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const seen = new Map<string, number>();
  const attempt = (address: string) => {
    const count = (seen.get(address) ?? 0) + 1;
    seen.set(address, count);
    return count;
  };

  const smtp = new SMTPServer({
    authOptional: !auth,
    ...(auth
      ? {
          authMethods: auth.methods,
          allowInsecureAuth: true,
          onAuth(credentials, _session, callback) {
            const good = credentials.username === auth.username && credentials.password === auth.password;
            if (!good) return callback(Object.assign(new Error('5.7.8 Bad credentials'), { responseCode: 535 }));
            callback(null, { user: credentials.username });
          },
        }
      : {}),
    disabledCommands: [...(tls && !tls.implicit ? [] : ['STARTTLS']), ...(auth ? [] : ['AUTH'])],
    ...(tls ? { key: tls.key, cert: tls.cert, secure: tls.implicit } : {}),
    // No reverse DNS lookup of the client: this machine has no network to ask.
    disableReverseLookup: true,
    logger: false,
    size: 10 * 1024 * 1024,
    hidePIPELINING: plain,
    hide8BITMIME: plain,
    hideSMTPUTF8: plain,
    onMailFrom(address, _session, callback) {
      if (address.address.toLowerCase().startsWith('mailfrom550')) {
        return callback(Object.assign(new Error('5.7.1 Sender refused'), { responseCode: 550 }));
      }
      callback();
    },
    onRcptTo(address, _session, callback) {
      if (address.address.toLowerCase().startsWith('reject550')) {
        const error = Object.assign(new Error('5.1.1 Mailbox unavailable'), { responseCode: 550 });
        return callback(error);
      }
      if (address.address.toLowerCase().startsWith('rcpt451')) {
        return callback(Object.assign(new Error('4.2.1 Mailbox busy, try later'), { responseCode: 451 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const recipients = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const first = recipients[0] ?? '';
        if (first.startsWith('tempfail-always') || (first.startsWith('tempfail-once') && attempt(first) === 1)) {
          return callback(Object.assign(new Error('4.3.0 Try again later'), { responseCode: 451 }));
        }
        if (first.startsWith('drop-once') && attempt(first) === 1) {
          // smtp-server keeps its connections in a Set; drop this one without a reply.
          const connections = (smtp as unknown as { connections: Set<{ id: string; _socket: { destroy(): void } }> })
            .connections;
          for (const connection of connections) if (connection.id === session.id) connection._socket.destroy();
          return;
        }
        const raw = Buffer.concat(chunks);
        const parsed = await simpleParser(raw);
        const toField = Array.isArray(parsed.to) ? parsed.to : parsed.to ? [parsed.to] : [];
        received.push({
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          envelopeTo: recipients,
          messageId: parsed.messageId ?? null,
          from: parsed.from?.text ?? '',
          to: toField.flatMap((t) => t.value.map((v) => v.address ?? '')),
          subject: parsed.subject ?? '',
          text: parsed.text ?? '',
          html: typeof parsed.html === 'string' ? parsed.html : null,
          raw: raw.toString('utf8'),
          helo: session.hostNameAppearsAs,
          user: typeof session.user === 'string' ? session.user : null,
          receivedAt: new Date().toISOString(),
        });
        callback();
      });
    },
  });
  // Drop-once destroys the socket on purpose; keep the server quiet about it.
  smtp.on('error', () => undefined);
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;

  const http: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const to = url.searchParams.get('to')?.toLowerCase();
    const messageId = url.searchParams.get('messageId');
    const mails = received.filter(
      (m) => (!to || m.envelopeTo.includes(to)) && (!messageId || m.messageId === messageId),
    );
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(mails));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const inboxUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  return {
    smtpPort,
    inboxUrl,
    close: async () => {
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
