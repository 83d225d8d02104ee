// Inbound mail shaped as real senders write it (Gmail, Outlook, vacation responders, MTAs), for the Worker's
// email() handler: hand a fixture to inboundMessage() from ./reports, or to inboundBytes() for 8-bit bodies.
import { inboundMessage, type ReportFixture } from './reports';

/** `rawBytes`, when present, are the message's exact bytes (`raw` then holds them one char per byte). */
export type InboundFixture = ReportFixture & { rawBytes?: Uint8Array };
export type Verdict = 'pass' | 'fail' | 'none';
export type AuthVerdicts = { spf?: Verdict; dkim?: Verdict; dmarc?: Verdict };
export type MessageOptions = { to: string; from?: string; messageId?: string; subject?: string };
export type PlainOptions = MessageOptions & {
  /** From's display name. */
  name?: string;
  cc?: string[];
  replyTo?: string;
  text?: string;
  /** Verdicts in Authentication-Results (each defaults to pass); null: no such header. */
  auth?: AuthVerdicts | null;
};
export type ReplyOptions = PlainOptions & { inReplyTo: string; references?: string[]; quoted?: string };
export type AutoSignal = 'Auto-Submitted' | 'X-Autoreply' | 'Precedence';
export type AutoReplyOptions = PlainOptions & {
  autoSubmitted?: 'auto-replied' | 'auto-generated' | 'no';
  /** Which headers to write; default all three, or only Auto-Submitted when autoSubmitted is 'no'. */
  signals?: AutoSignal[];
};
export type DeliveryReportOptions = MessageOptions & {
  /** The address that failed, its RFC 3463 status, the remote server's words, the returned mail's Message-ID. */
  recipient?: string;
  status?: string;
  diagnostic?: string;
  originalMessageId?: string;
};
export type SentAttachment = {
  filename: string;
  mimeType: string;
  disposition: 'attachment' | 'inline';
  contentId?: string;
  bytes: Uint8Array;
  size: number;
};

const DATE = 'Thu, 26 Nov 2026 10:00:00 +0000';
const BIG = '\u0000BIG\u0000'; // where oversizedMessage splices its body in, after crlf()
const crlf = (text: string) => text.replace(/\r?\n/g, '\r\n');
const utf8 = (text: string) => new TextEncoder().encode(text);
const latin1Bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const hex = (byte: number) => `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
const angle = (id: string) => (id.startsWith('<') ? id : `<${id}>`);
const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1);
const uniqueId = (host: string) => `<${crypto.randomUUID().replaceAll('-', '')}@${host}>`;
const isAscii = (text: string) => /^[\x20-\x7e]*$/.test(text);

function toBase64(bytes: Uint8Array) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
/** A multipart body: its Content-Type line, then each part (headers, blank line, content) after a delimiter. */
const multipart = (type: string, boundary: string, parts: string[]) =>
  `Content-Type: multipart/${type}; boundary="${boundary}"\n\n${parts.map((p) => `--${boundary}\n${p}\n`).join('')}--${boundary}--\n`;
const base64Lines = (bytes: Uint8Array) =>
  toBase64(bytes)
    .match(/.{1,76}/g)!
    .join('\n');

/** RFC 2047 B-encoding of non-ASCII header text, in words of ≤ 39 bytes folded onto lines of their own. */
function encodeWord(text: string) {
  if (isAscii(text)) return text;
  const words = [''];
  for (const ch of text) {
    if (utf8(words.at(-1) + ch).length > 39) words.push('');
    words[words.length - 1] += ch;
  }
  return words.map((w) => `=?UTF-8?B?${toBase64(utf8(w))}?=`).join('\n ');
}

/** RFC 2045 quoted-printable of UTF-8 text: lines ≤ 76 chars, longer ones soft-broken with `=`. */
function quotedPrintable(text: string) {
  const encodeLine = (line: string) => {
    const bytes = utf8(line);
    const rows = [''];
    bytes.forEach((b, i) => {
      const literal = (b > 32 && b < 127 && b !== 61) || (b === 32 && i < bytes.length - 1);
      const token = literal ? String.fromCharCode(b) : hex(b);
      if (rows.at(-1)!.length + token.length > 75) rows.push('');
      rows[rows.length - 1] += token;
    });
    return rows.join('=\n');
  };
  return text.split('\n').map(encodeLine).join('\n');
}

type Relay = { host: string; ip: string; selector: string };
const GMAIL: Relay = { host: 'mail-wm1-f41.google.com', ip: '209.85.128.41', selector: '20230601' };

function authResults(v: AuthVerdicts, mailFrom: string, from: string, relay: Relay) {
  const { spf = 'pass', dkim = 'pass', dmarc = 'pass' } = v;
  const spfWhy = {
    pass: `domain of ${mailFrom} designates ${relay.ip} as permitted sender`,
    fail: `domain of ${mailFrom} does not designate ${relay.ip} as permitted sender`,
    none: `domain of ${domainOf(mailFrom)} has no SPF record`,
  }[spf];
  const why = { pass: '', fail: ' (signature did not verify)', none: ' (no signature)' }[dkim];
  return [
    'Authentication-Results: mx.cloudflare.net;',
    ` dkim=${dkim}${why}${dkim === 'none' ? '' : ` header.d=${domainOf(from)} header.s=${relay.selector} header.b=Xk3vQ9aZ`};`,
    ` spf=${spf} (mx.cloudflare.net: ${spfWhy}) smtp.mailfrom=${mailFrom};`,
    ` dmarc=${dmarc}${dmarc === 'none' ? '' : ' (p=NONE sp=QUARANTINE dis=NONE)'} header.from=${domainOf(from)}`,
  ];
}

type Internal = PlainOptions & {
  headers?: string[];
  relay?: Relay;
  mailFrom?: string;
  part?: string;
  /** How non-ASCII header text is encoded (RFC 2047). */
  encode?: (text: string) => string;
};

/** One person's message as it reaches Cloudflare: two Received hops, auth results, signature, then the mail. */
function personal(o: Internal): ReportFixture {
  const from = o.from ?? 'ada.lovelace@gmail.com';
  const mailFrom = o.mailFrom ?? from;
  const relay = o.relay ?? GMAIL;
  const signed = (o.auth?.dkim ?? 'pass') !== 'none';
  const encode = o.encode ?? encodeWord;
  const name = o.name ?? 'Ada Lovelace';
  const head = [
    `Received: from ${relay.host} (${relay.host}. [${relay.ip}])`,
    `        by mx.cloudflare.net (Postfix) with ESMTPS id 4Q2mZt1xq9z1fR7`,
    `        for <${o.to}>; ${DATE}`,
    `Received: by ${relay.host} with SMTP id 5b1f17b1804b1-4779ce2a624so18273105e9.2`,
    `        for <${o.to}>; Thu, 26 Nov 2026 01:59:59 -0800 (PST)`,
    ...(o.auth === null ? [] : authResults(o.auth ?? {}, mailFrom, from, relay)),
    ...(signed
      ? [
          `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=${domainOf(from)}; s=${relay.selector}; t=1764151199;`,
          '        h=from:to:cc:subject:date:message-id:reply-to; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=;',
          '        b=Q2ZtW8bXkz9J3lYv4sNq0mJ1fRr5TtP7cKx8ZpVw2eHq6u0oAyLd+Gm3sB9nIiUjEoWkRfYa5vXcDz1hT7gS4Q==',
        ]
      : []),
    'MIME-Version: 1.0',
    `From: ${isAscii(name) ? `"${name}"` : encode(name)} <${from}>`,
    `Date: ${DATE}`,
    `Message-ID: ${o.messageId ? angle(o.messageId) : uniqueId(relay === GMAIL ? 'mail.gmail.com' : domainOf(from))}`,
    `Subject: ${encode(o.subject ?? 'Quick question')}`,
    `To: ${o.to}`,
    ...(o.cc?.length ? [`Cc: ${o.cc.join(', ')}`] : []),
    ...(o.replyTo ? [`Reply-To: ${o.replyTo}`] : []),
    ...(o.headers ?? []),
  ];
  const part =
    o.part ??
    `Content-Type: text/plain; charset="UTF-8"\nContent-Transfer-Encoding: quoted-printable\n\n${quotedPrintable(o.text ?? PLAIN_TEXT)}`;
  return { from: mailFrom, to: o.to, raw: crlf(`${head.join('\n')}\n${part}`) };
}

/** plainMessage's default body: needs quoted-printable (an `=`, an é, a line past 76 chars). */
export const PLAIN_TEXT =
  'Hi,\n\nQuick check on the numbers: 2 + 2 = 4, and the café on the corner takes cards.\n' +
  'This sentence is long on purpose, so that quoted-printable has to wrap it with a soft line break somewhere.\n\nAda\n';

/** A plain-text mail as Gmail sends it (quoted-printable UTF-8; the subject RFC 2047-encoded if non-ASCII). */
export const plainMessage = (o: PlainOptions) => personal(o);

/** A reply: `Re:` subject, In-Reply-To, References (default: just inReplyTo), the quoted parent under "wrote:". */
export function replyTo(o: ReplyOptions): ReportFixture {
  const subject = o.subject ?? 'Your receipt';
  const quoted = (o.quoted ?? 'Thanks for your order.\nYour receipt is attached.')
    .split('\n')
    .map((line) => (line ? `> ${line}` : '>'))
    .join('\n');
  return personal({
    ...o,
    subject: /^re:/i.test(subject) ? subject : `Re: ${subject}`,
    headers: [
      `In-Reply-To: ${angle(o.inReplyTo)}`,
      `References: ${(o.references ?? [o.inReplyTo]).map(angle).join('\n ')}`,
    ],
    text: `${o.text ?? 'Thanks, that works for me.'}\n\nOn Thu, 26 Nov 2026 at 10:00, <${o.to}> wrote:\n${quoted}\n`,
  });
}

/** An out-of-office reply; autoSubmitted 'no' makes it a person's mail that says so (not automatic). */
export function autoReplyMessage(o: AutoReplyOptions): ReportFixture {
  const value = o.autoSubmitted ?? 'auto-replied';
  const person = value === 'no';
  const lines: Record<AutoSignal, string> = {
    'Auto-Submitted': `Auto-Submitted: ${value}`,
    'X-Autoreply': 'X-Autoreply: yes',
    Precedence: 'Precedence: auto_reply',
  };
  const signals = o.signals ?? (person ? ['Auto-Submitted'] : ['Auto-Submitted', 'X-Autoreply', 'Precedence']);
  return personal({
    ...o,
    from: o.from ?? 'grace@example.org',
    name: o.name ?? 'Grace Hopper',
    relay: { host: 'mail.example.org', ip: '198.51.100.25', selector: 's1' },
    subject: o.subject ?? (person ? 'Lunch on Friday?' : 'Automatic reply: Your receipt'),
    text: o.text ?? (person ? 'Are you free for lunch on Friday?\n' : 'I am out of the office until Monday.\n'),
    headers: signals.map((s) => lines[s]),
  });
}

/** From someone@ownDomain through a server that isn't the domain's: SPF passes for another domain, DMARC fails. */
export function spoofedOwnDomain(o: PlainOptions & { ownDomain: string }): ReportFixture {
  return personal({
    ...o,
    from: o.from ?? `billing@${o.ownDomain}`,
    name: o.name ?? 'Accounts Payable',
    mailFrom: 'bounce@bulk-mailer.example',
    relay: { host: 'vps-4417.bulk-mailer.example', ip: '203.0.113.66', selector: 'default' },
    auth: o.auth === undefined ? { spf: 'pass', dkim: 'none', dmarc: 'fail' } : o.auth,
    subject: o.subject ?? 'Urgent: updated bank details',
    text: o.text ?? 'Please pay the attached invoice to our new account today.\n',
  });
}

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4AWPQz3/9HwAE4wKJyDHWVgAAAABJRU5ErkJggg==';
const GIF_1X1 = 'R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==';

/** A one-page PDF with a correct xref table. */
function tinyPdf() {
  const stream = 'BT /F1 18 Tf 72 720 Td (Invoice 2026-0042: EUR 120.00) Tj ET';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets = objects.map((body, i) => {
    const at = pdf.length;
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return at;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  pdf += offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n \n`).join('');
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return latin1Bytes(pdf);
}

const sent = (filename: string, mimeType: string, bytes: Uint8Array, contentId?: string): SentAttachment => ({
  filename,
  mimeType,
  disposition: contentId ? 'inline' : 'attachment',
  ...(contentId ? { contentId } : {}),
  bytes,
  size: bytes.length,
});
export const INVOICE_PDF = sent('invoice.pdf', 'application/pdf', tinyPdf());
/** A real 1x1 RGBA PNG (70 bytes). */
export const LOGO_PNG = sent('logo.png', 'image/png', latin1Bytes(atob(PNG_1X1)));
/** A real 1x1 GIF (43 bytes), shown inline by the HTML through its Content-ID. */
export const SIGNATURE_GIF = sent('signature.gif', 'image/gif', latin1Bytes(atob(GIF_1X1)), '<sig@01DB5F2A.5C0E>');
/** htmlWithAttachments' binary parts in MIME order (the order postal-mime lists them). */
export const HTML_ATTACHMENTS = [SIGNATURE_GIF, INVOICE_PDF, LOGO_PNG] as const;
export const HTML_TEXT = 'Hello,\n\nPlease find the invoice for November attached.\n\nBest regards,\nLin\n';
const HTML = `<html><head><meta http-equiv="Content-Type" content="text/html; charset=us-ascii"></head><body><p>Hello,</p><p>Please find the invoice for November attached.</p><p>Best regards,<br>Lin</p><p><img src="cid:${SIGNATURE_GIF.contentId!.slice(1, -1)}" width="1" height="1" alt="signature"></p></body></html>
`;
const qp = (type: string, text: string) =>
  `Content-Type: text/${type}; charset="us-ascii"\nContent-Transfer-Encoding: quoted-printable\n\n${quotedPrintable(text)}`;
const binaryPart = (a: SentAttachment) =>
  [
    `Content-Type: ${a.mimeType}; name="${a.filename}"`,
    `Content-Description: ${a.filename}`,
    `Content-Disposition: ${a.disposition}; filename="${a.filename}"; size=${a.size};`,
    '\tcreation-date="Thu, 26 Nov 2026 09:58:00 GMT"; modification-date="Thu, 26 Nov 2026 09:58:00 GMT"',
    ...(a.contentId ? [`Content-ID: ${a.contentId}`] : []),
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(a.bytes),
  ].join('\n');

/** HTML mail as Outlook sends it: mixed[related[alternative[plain, html], inline GIF], invoice.pdf, logo.png]. */
export function htmlWithAttachments(o: MessageOptions & { name?: string }): ReportFixture {
  const id = 'PH0PR11MB4966namprd11prod_';
  const part = multipart('mixed', `_004_${id}`, [
    multipart('related; type="multipart/alternative"', `_003_${id}`, [
      multipart('alternative', `_000_${id}`, [qp('plain', HTML_TEXT), qp('html', HTML)]),
      binaryPart(SIGNATURE_GIF),
    ]),
    binaryPart(INVOICE_PDF),
    binaryPart(LOGO_PNG),
  ]);
  return personal({
    ...o,
    from: o.from ?? 'lin.chen@contoso.onmicrosoft.com',
    name: o.name ?? 'Lin Chen',
    relay: { host: 'mail-dm6nam11on2101.outbound.protection.outlook.com', ip: '40.107.223.101', selector: 'selector1' },
    subject: o.subject ?? 'Invoice for November',
    messageId: o.messageId ?? uniqueId('PH0PR11MB4966.namprd11.prod.outlook.com'),
    headers: ['Thread-Topic: Invoice for November', 'Content-Language: en-US', 'X-MS-Has-Attach: yes'],
    part,
  });
}

/** A message of at least `bytes` bytes (Gmail's headers, a short text, a base64 archive.bin of attachmentSize). */
export function oversizedMessage(o: PlainOptions & { bytes: number }): ReportFixture & { attachmentSize: number } {
  const attachment = `Content-Type: application/octet-stream; name="archive.bin"
Content-Disposition: attachment; filename="archive.bin"
Content-Transfer-Encoding: base64

${BIG}`;
  const text = 'Content-Type: text/plain; charset="UTF-8"\n\nThe archive is attached.\n';
  const part = multipart('mixed', '000000000000big', [text, attachment]);
  const fixture = personal({ ...o, subject: o.subject ?? 'The whole archive', part });
  const [before = '', rest = ''] = fixture.raw.split(BIG);
  const after = rest.slice(2); // the delimiter's CRLF: each base64 line ends with its own
  const line = `${'QUFB'.repeat(19)}\r\n`; // 76 base64 chars: 57 bytes of "A"
  const lines = Math.max(1, Math.ceil((o.bytes - before.length - after.length) / line.length));
  return { ...fixture, raw: before + line.repeat(lines) + after, attachmentSize: lines * 57 }; // repeat(): no quadratic build
}

/** An RFC 3464 DSN from MAILER-DAEMON (null envelope sender) about mail that the inbound address `to` sent. */
export function deliveryReport(o: DeliveryReportOptions): ReportFixture {
  const recipient = o.recipient ?? 'nobody@example.net';
  const status = o.status ?? '5.1.1';
  const diagnostic = o.diagnostic ?? `550 ${status} <${recipient}>: Recipient address rejected: User unknown`;
  const body = multipart('report; report-type=delivery-status', '4Q2n0B2xk4z9sVd.1764151201/mx.example.net', [
    `Content-Type: text/plain; charset=us-ascii

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

<${recipient}>: host mx.example.net[192.0.2.10] said: ${diagnostic}
`,
    `Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net
Arrival-Date: ${DATE}

Final-Recipient: rfc822; ${recipient}
Action: failed
Status: ${status}
Remote-MTA: dns; mx.example.net
Diagnostic-Code: smtp; ${diagnostic}
`,
    `Content-Type: text/rfc822-headers

From: <${o.to}>
To: <${recipient}>
Subject: Hello
Message-ID: ${angle(o.originalMessageId ?? '20261126095959.1A2B3C@mail.example.com')}
Date: Thu, 26 Nov 2026 09:59:59 +0000
`,
  ]);
  return {
    from: '',
    to: o.to,
    raw: crlf(`Return-Path: <>
Received: from mx.example.net (mx.example.net [192.0.2.10]) by mx.cloudflare.net (Postfix)
        with ESMTPS id 4Q2n0C0p1Gz1fR9 for <${o.to}>; Thu, 26 Nov 2026 10:00:02 +0000
From: ${o.from ?? 'MAILER-DAEMON@mx.example.net'} (Mail Delivery System)
Subject: ${encodeWord(o.subject ?? 'Undelivered Mail Returned to Sender')}
To: ${o.to}
Auto-Submitted: auto-replied
Date: Thu, 26 Nov 2026 10:00:01 +0000
Message-Id: ${o.messageId ? angle(o.messageId) : uniqueId('mx.example.net')}
MIME-Version: 1.0
${body}`),
  };
}

/** RFC 2047 Q-encoding in ISO-8859-1. */
const latin1Word = (text: string) =>
  isAscii(text)
    ? text
    : `=?ISO-8859-1?Q?${[...text].map((c) => (/[A-Za-z0-9!*+/-]/.test(c) ? c : c === ' ' ? '_' : hex(c.charCodeAt(0)))).join('')}?=`;
export const LATIN1_TEXT = 'Bonjour,\n\nLe café est prêt. À bientôt !\n\nRenée\n';

/** ISO-8859-1 encoded-words in From and Subject, an 8bit iso-8859-1 body; `rawBytes` are its exact bytes. */
export function latin1Message(o: PlainOptions): InboundFixture {
  const subject = o.subject ?? 'Café';
  const text = o.text ?? LATIN1_TEXT;
  if (/[^\x00-\xff]/.test(subject + text)) throw new Error('latin1Message: text outside ISO-8859-1');
  const fixture = personal({
    ...o,
    from: o.from ?? 'renee.dupre@example.fr',
    name: o.name ?? 'Renée Dupré',
    subject,
    relay: { host: 'smtp.example.fr', ip: '192.0.2.77', selector: 'mail' },
    encode: latin1Word,
    part: `Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: 8bit\n\n${text}`,
  });
  return { ...fixture, rawBytes: latin1Bytes(fixture.raw) };
}

/** Like inboundMessage() from ./reports, but hands over `rawBytes` as they are when the fixture has them. */
export const inboundBytes = (fixture: InboundFixture) => inboundMessage(fixture, fixture.rawBytes);
