// Bounces and complaints as mail servers send them, written from RFC 3464 (delivery status notifications),
// RFC 5965 (feedback reports) and the layouts Postfix, Exim, Gmail, Microsoft and Yahoo use, to feed the
// Worker's email() handler. `to` is where the report is mailed (a return path address, or the feedback loop's).

export type ReportFixture = { from: string; to: string; raw: string };

const crlf = (text: string) => text.replace(/\r?\n/g, '\r\n');

/** The returned message's headers (text/rfc822-headers, or the start of a message/rfc822 part). */
const returnedHeaders = (messageId: string | null, recipient: string) =>
  [
    'From: postcode <no-reply@postcode.dev>',
    `To: ${recipient}`,
    'Subject: Your receipt',
    ...(messageId ? [`Message-ID: ${messageId}`] : []),
    'Date: Thu, 26 Nov 2026 10:00:00 +0000',
  ].join('\n');

type Bounce = {
  to: string;
  recipient: string;
  messageId?: string | null;
  /** RFC 3464 Action and Status. */
  action?: 'failed' | 'delayed' | 'delivered';
  status?: string;
  diagnostic?: string;
};

/** Postfix's bounce: multipart/report with its "I'm sorry to have to inform you" text and text/rfc822-headers. */
export function postfixBounce(b: Bounce): ReportFixture {
  const action = b.action ?? 'failed';
  const status = b.status ?? '5.1.1';
  const diagnostic = b.diagnostic ?? `550 ${status} <${b.recipient}>: Recipient address rejected: User unknown`;
  const subject = action === 'delayed' ? 'Delayed Mail (still being retried)' : 'Undelivered Mail Returned to Sender';
  return {
    from: '',
    to: b.to,
    raw: crlf(`Return-Path: <>
From: MAILER-DAEMON@mx.example.net (Mail Delivery System)
Subject: ${subject}
To: ${b.to}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="PFX.1764151200/mx.example.net"
Message-Id: <20261126100001.PFX@mx.example.net>

This is a MIME-encapsulated message.

--PFX.1764151200/mx.example.net
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.example.net.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

<${b.recipient}>: host mx.example.net[192.0.2.10] said: ${diagnostic}

--PFX.1764151200/mx.example.net
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net
X-Postfix-Queue-ID: 4Q1xyz
Arrival-Date: Thu, 26 Nov 2026 10:00:00 +0000

Final-Recipient: rfc822; ${b.recipient}
Original-Recipient: rfc822;${b.recipient}
Action: ${action}
Status: ${status}
Remote-MTA: dns; mx.example.net
Diagnostic-Code: smtp; ${diagnostic.slice(0, 40)}
    ${diagnostic.slice(40)}

--PFX.1764151200/mx.example.net
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers

${returnedHeaders(b.messageId ?? null, b.recipient)}

--PFX.1764151200/mx.example.net--
`),
  };
}

/** Exim's plain-text bounce: the failed addresses indented, then a copy of the message. */
export function eximBounce(b: Bounce): ReportFixture {
  return {
    from: '',
    to: b.to,
    raw: crlf(`From: Mail Delivery System <Mailer-Daemon@mail.example.org>
To: ${b.to}
Subject: Mail delivery failed: returning message to sender
Auto-Submitted: auto-replied
Content-Type: text/plain; charset=us-ascii

This message was created automatically by mail delivery software.

A message that you sent could not be delivered to one or more of its
recipients. This is a permanent error. The following address(es) failed:

  ${b.recipient}
    host mail.example.org [198.51.100.7]
    SMTP error from remote mail server after RCPT TO:<${b.recipient}>:
    550 5.1.1 No such user here

------ This is a copy of the message, including all the headers. ------

${returnedHeaders(b.messageId ?? null, b.recipient)}

hi
`),
  };
}

/** Gmail's bounce: multipart/report, an "Address not found" text and html part, the DSN, the message. */
export function gmailBounce(b: Bounce): ReportFixture {
  return {
    from: '',
    to: b.to,
    raw: crlf(`From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>
To: ${b.to}
Subject: Delivery Status Notification (Failure)
Auto-Submitted: auto-replied
Content-Type: multipart/report; boundary="000000000000gmail"; report-type=delivery-status

--000000000000gmail
Content-Type: multipart/related; boundary="000000000000gmailrel"

--000000000000gmailrel
Content-Type: multipart/alternative; boundary="000000000000gmailalt"

--000000000000gmailalt
Content-Type: text/plain; charset="UTF-8"

** Address not found **

Your message wasn't delivered to ${b.recipient} because the address couldn't be found, or is unable to receive mail.

The response from the remote server was:
550 5.1.1 The email account that you tried to reach does not exist.

--000000000000gmailalt
Content-Type: text/html; charset="UTF-8"

<html><body><h1>Address not found</h1><p>Your message wasn't delivered to <b>${b.recipient}</b>.</p></body></html>

--000000000000gmailalt--

--000000000000gmailrel--

--000000000000gmail
Content-Type: message/delivery-status

Reporting-MTA: dns; googlemail.com
Received-From-MTA: dns; mail-sor-f41.google.com
Arrival-Date: Thu, 26 Nov 2026 02:00:00 -0800 (PST)

Final-Recipient: rfc822; ${b.recipient}
Action: failed
Status: 5.1.1
Remote-MTA: dns; gmail-smtp-in.l.google.com. (2607:f8b0:4864:20::1a, the server for the domain gmail.com.)
Diagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does not exist.
Last-Attempt-Date: Thu, 26 Nov 2026 02:00:01 -0800 (PST)

--000000000000gmail
Content-Type: message/rfc822

${returnedHeaders(b.messageId ?? null, b.recipient)}

hi

--000000000000gmail--
`),
  };
}

/** Microsoft (Exchange Online, Outlook.com): multipart/report with its own status detail (5.1.10). */
export function microsoftBounce(b: Bounce): ReportFixture {
  return {
    from: '',
    to: b.to,
    raw: crlf(`From: postmaster@outlook.com
To: ${b.to}
Subject: Undeliverable: Your receipt
Content-Type: multipart/report; report-type=delivery-status; boundary="ms_boundary_1"
Content-Language: en-US
Auto-Submitted: auto-replied

--ms_boundary_1
Content-Type: text/plain; charset="us-ascii"

Your message to ${b.recipient} couldn't be delivered.
${b.recipient.split('@')[0]} wasn't found at ${b.recipient.split('@')[1]}.

--ms_boundary_1
Content-Type: message/delivery-status

Reporting-MTA: dns;DM6PR01MB0001.prod.outlook.com
Received-From-MTA: dns;mail.postcode.dev
Arrival-Date: Thu, 26 Nov 2026 10:00:00 +0000

Original-Recipient: rfc822;${b.recipient}
Final-Recipient: rfc822;${b.recipient}
Action: failed
Status: 5.1.10
Diagnostic-Code: smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup

--ms_boundary_1
Content-Type: text/rfc822-headers

${returnedHeaders(b.messageId ?? null, b.recipient)}

--ms_boundary_1--
`),
  };
}

/** Yahoo's classic plain-text bounce (no DSN part). */
export function yahooBounce(b: Bounce): ReportFixture {
  return {
    from: '',
    to: b.to,
    raw: crlf(`From: MAILER-DAEMON@yahoo.com
To: ${b.to}
Subject: Failure Notice
Content-Type: text/plain

Sorry, we were unable to deliver your message to the following address.

<${b.recipient}>:
554: delivery error: dd This user doesn't have a yahoo.com account (${b.recipient}) [0] - mta1001.mail.bf1.yahoo.com

--- Below this line is a copy of the message.

${returnedHeaders(b.messageId ?? null, b.recipient)}

hi
`),
  };
}

/** An RFC 5965 feedback report (Feedback-Type abuse), as a mailbox provider's feedback loop sends it. */
export function abuseReport(r: {
  to: string;
  recipient: string;
  messageId: string | null;
  withRcpt?: boolean;
}): ReportFixture {
  return {
    from: 'fbl@feedback.example.net',
    to: r.to,
    raw: crlf(`From: <fbl@feedback.example.net>
To: <${r.to}>
Subject: FW: Your receipt
Date: Thu, 26 Nov 2026 11:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="arf_boundary"

--arf_boundary
Content-Type: text/plain; charset="US-ASCII"
Content-Transfer-Encoding: 7bit

This is an email abuse report for an email message received from IP 192.0.2.25 on Thu, 26 Nov 2026 10:00:00 +0000.

--arf_boundary
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: SomeGenerator/1.0
Version: 1
Original-Mail-From: <bounces@postcode.dev>
${r.withRcpt === false ? '' : `Original-Rcpt-To: <${r.recipient}>\n`}Arrival-Date: Thu, 26 Nov 2026 10:00:00 +0000
Source-IP: 192.0.2.25
Reported-Domain: postcode.dev

--arf_boundary
Content-Type: message/rfc822
Content-Disposition: inline

${returnedHeaders(r.messageId, r.recipient)}

hi
--arf_boundary--
`),
  };
}

/** Something mailed to the return path that is no report (an auto-reply). */
export function autoReply(to: string): ReportFixture {
  return {
    from: 'someone@example.net',
    to,
    raw: crlf(`From: someone@example.net
To: ${to}
Subject: Out of office
Auto-Submitted: auto-replied
Content-Type: text/plain

I am away until Monday.
`),
  };
}

/**
 * A message as the email() handler gets it (`raw` UTF-8 encoded, or these exact bytes); `rejected` is what it
 * passed to setReject (null: not rejected).
 */
export function inboundMessage(fixture: ReportFixture, bytes = new TextEncoder().encode(fixture.raw)) {
  const state = { rejected: null as string | null };
  const message = {
    from: fixture.from || 'mailer-daemon@mx.example.net',
    to: fixture.to,
    headers: new Headers(),
    raw: new Response(bytes).body!,
    rawSize: bytes.length,
    setReject(reason: string) {
      state.rejected = reason;
    },
  } as unknown as ForwardableEmailMessage;
  return { message, state };
}
