// `npm run simulate -- inbound <to> [--from <address>] [--subject <text>] [--text <body>] [--in-reply-to <emailId>]`:
// under `npm start`, a person's mail to a receiving address, handed to the Worker's email() handler as Cloudflare
// Email Routing would hand it over: a text part and a small attachment, with the Authentication-Results header
// Email Routing writes (every check passing, as for a well-configured sender). `--in-reply-to` answers a mail
// postcode sent (read from the local inbox), so the message joins that email's thread.
import { parseArgs } from 'node:util';
import { handToWorker, readyService, sentMail } from './local-service.mjs';

const USAGE =
  'usage: npm run simulate -- inbound <to> [--from <address>] [--subject <text>] [--text <body>] [--in-reply-to <emailId>]';
let parsed;
try {
  parsed = parseArgs({
    args: process.argv.slice(3),
    allowPositionals: true,
    options: {
      from: { type: 'string', default: 'Ada Lovelace <ada@example.com>' },
      subject: { type: 'string' },
      text: { type: 'string', default: 'Hello! Could you send me last month’s invoice?\n\nAda' },
      'in-reply-to': { type: 'string' },
    },
  });
} catch (error) {
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const { values, positionals } = parsed;
const to = positionals[0] ?? '';
const address = /<([^>]+)>\s*$/.exec(values.from)?.[1] ?? values.from;
const replyTo = values['in-reply-to'];
if (!/^[^@\s]+@[^@\s]+$/.test(to) || !/^[^@\s]+@[^@\s]+$/.test(address) || positionals.length > 1) {
  console.error(USAGE);
  process.exit(2);
}
if (replyTo !== undefined && !/^em_[a-z2-7]{20}$/.test(replyTo)) {
  console.error(`--in-reply-to: expected an email id (em_…), not ${JSON.stringify(replyTo)}\n${USAGE}`);
  process.exit(2);
}

const crlf = (text) => text.replace(/\r?\n/g, '\r\n');
const fromDomain = address.split('@')[1];
const original = replyTo ? await sentMail(replyTo) : null;
const subject = values.subject ?? (original ? `Re: ${original.subject}` : 'A question about my invoice');
const boundary = `simulated-${crypto.randomUUID()}`;
const notes = Buffer.from('Order 1042: 2 × notebook, 1 × pen\n').toString('base64');
const raw =
  crlf(`Authentication-Results: mx.simulated.localhost; spf=pass smtp.mailfrom=${address}; dkim=pass header.d=${fromDomain}; dmarc=pass header.from=${fromDomain}
From: ${values.from}
To: ${to}
Subject: ${subject}
Date: ${new Date().toUTCString()}
Message-ID: <${crypto.randomUUID()}@${fromDomain}>
${original ? `In-Reply-To: ${original.messageId}\nReferences: ${original.messageId}\n` : ''}MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="${boundary}"

--${boundary}
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

${values.text}
--${boundary}
Content-Type: text/plain; charset=utf-8; name="notes.txt"
Content-Disposition: attachment; filename="notes.txt"
Content-Transfer-Encoding: base64

${notes}
--${boundary}--
`);

const { baseUrl } = readyService();
const res = await handToWorker(baseUrl, address, to, raw);
if (res.status >= 300) {
  console.error(`refused: HTTP ${res.status} ${res.text.trim()}`);
  console.error('does a route take this address? curl -s $PC/api/v1/inbound/routes -H "Authorization: Bearer $KEY"');
  process.exit(1);
}
console.log(`mail from ${address} handed to the email handler for ${to}: HTTP ${res.status}`);
console.log(`see it: curl -s ${baseUrl}/api/v1/inbound -H "Authorization: Bearer <mail key>"`);
