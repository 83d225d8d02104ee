#!/usr/bin/env node
// The benchmark's SMTP server, in its own process so that it does not share an event loop with the
// load generator. Accepts everything, counts messages by Message-ID, keeps the code of each OTP
// session, and answers on a small HTTP API: GET /counts, GET /otp-codes, POST /reset.
import { createServer } from 'node:http';
import { SMTPServer } from 'smtp-server';

const [smtpPort, httpPort] = process.argv.slice(2).map(Number);
let counts = new Map();
const otpCodes = new Map();

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  // No reverse DNS of 127.0.0.1: on this offline machine it delays every greeting by ~100 ms.
  disableReverseLookup: true,
  logger: false,
  onData(stream, _session, callback) {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      const messageId = raw.match(/^Message-ID:\s*(<[^>]+>)/im)?.[1] ?? `<none-${Math.random()}>`;
      counts.set(messageId, (counts.get(messageId) ?? 0) + 1);
      const session = messageId.match(/^<(otp_[a-z2-7]+)@/)?.[1];
      const code = raw.match(/\r\n\r\n(\d{4,10})\r\n/)?.[1];
      if (session && code) otpCodes.set(session, code);
      callback();
    });
  },
});
smtp.on('error', () => undefined);

const http = createServer((req, res) => {
  res.setHeader('Content-Type', 'application/json');
  if (req.method === 'POST' && req.url === '/reset') {
    counts = new Map();
    return res.end('{}');
  }
  if (req.url === '/counts') return res.end(JSON.stringify(Object.fromEntries(counts)));
  if (req.url === '/otp-codes') return res.end(JSON.stringify(Object.fromEntries(otpCodes)));
  res.statusCode = 404;
  res.end('{}');
});

smtp.listen(smtpPort, '127.0.0.1', () => http.listen(httpPort, '127.0.0.1', () => process.send?.('ready')));
