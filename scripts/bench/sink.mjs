#!/usr/bin/env node
// The benchmark's SMTP server, in its own process so that it does not share an event loop with the
// load generator. A minimal RFC 5321 receiver: it greets at once (smtp-server waits 100 ms to catch
// early talkers, which would dominate every in-request send), accepts every message, counts them
// by Message-ID with the time each first arrived, and keeps the code of each OTP session. HTTP API:
// GET /counts, GET /arrivals (epoch ms), GET /otp-codes, POST /reset.
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';

const [smtpPort, httpPort] = process.argv.slice(2).map(Number);
let counts = new Map();
let arrivals = new Map();
const otpCodes = new Map();

function received(raw) {
  const messageId = raw.match(/^Message-ID:\s*(<[^>]+>)/im)?.[1] ?? `<none-${Math.random()}>`;
  counts.set(messageId, (counts.get(messageId) ?? 0) + 1);
  if (!arrivals.has(messageId)) arrivals.set(messageId, Date.now());
  const session = messageId.match(/^<(otp_[0-9a-z_]+)[.@]/)?.[1];
  const code = raw.match(/\r\n\r\n(\d{4,10})\r\n/)?.[1];
  if (session && code) otpCodes.set(session, code);
}

const smtp = createTcpServer((socket) => {
  socket.setNoDelay(true);
  let buffer = '';
  let data = null; // the message while in DATA
  socket.write('220 bench-sink ESMTP\r\n');
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    let replies = '';
    for (;;) {
      if (data !== null) {
        const end = buffer.indexOf('\r\n.\r\n');
        if (end === -1) break;
        data += buffer.slice(0, end + 2);
        buffer = buffer.slice(end + 5);
        received(data);
        data = null;
        replies += '250 2.0.0 queued\r\n';
        continue;
      }
      const eol = buffer.indexOf('\r\n');
      if (eol === -1) break;
      const line = buffer.slice(0, eol);
      buffer = buffer.slice(eol + 2);
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO') replies += '250-bench-sink\r\n250-PIPELINING\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n';
      else if (verb === 'DATA') {
        data = '';
        // The body may already be in the buffer; the loop continues with it.
        replies += '354 go ahead\r\n';
      } else if (verb === 'QUIT') {
        socket.end(`${replies}221 bye\r\n`);
        return;
      } else replies += '250 ok\r\n'; // HELO, MAIL, RCPT, RSET, NOOP
    }
    if (replies) socket.write(replies);
  });
  socket.on('error', () => undefined);
});

const http = createHttpServer((req, res) => {
  res.setHeader('Content-Type', 'application/json');
  if (req.method === 'POST' && req.url === '/reset') {
    counts = new Map();
    arrivals = new Map();
    return res.end('{}');
  }
  if (req.url === '/counts') return res.end(JSON.stringify(Object.fromEntries(counts)));
  if (req.url === '/arrivals') return res.end(JSON.stringify(Object.fromEntries(arrivals)));
  if (req.url === '/otp-codes') return res.end(JSON.stringify(Object.fromEntries(otpCodes)));
  res.statusCode = 404;
  res.end('{}');
});

smtp.listen(smtpPort, '127.0.0.1', () => http.listen(httpPort, '127.0.0.1', () => process.send?.('ready')));
