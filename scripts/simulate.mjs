#!/usr/bin/env node
// `npm run simulate -- <bounce|soft-bounce|delayed|complaint> <emailId> <address>`: under `npm start`, what a
// receiving mail server would send back for a mail postcode sent, posted to the Worker's email() handler as
// `wrangler dev` takes inbound mail (POST /cdn-cgi/handler/email). A bounce goes where a real one would: to the
// mail's envelope sender, read from the local inbox; a complaint is an RFC 5965 report to the feedback address.
// `npm run simulate -- inbound <to> …`: a person's mail to a receiving address (scripts/simulate-inbound.mjs).
import { handToWorker, readyService, sentMail } from './local-service.mjs';

const KINDS = ['bounce', 'soft-bounce', 'delayed', 'complaint'];
const [kind, emailId, address] = process.argv.slice(2);
const crlf = (text) => text.replace(/\r?\n/g, '\r\n');

function deliveryStatusNotification(to, mail) {
  const [action, status, diagnostic] = {
    bounce: ['failed', '5.1.1', `550 5.1.1 <${address}>: Recipient address rejected: User unknown`],
    'soft-bounce': ['failed', '4.4.7', '450 4.4.7 Message expired: could not be delivered for 5 days'],
    delayed: ['delayed', '4.4.1', '421 4.4.1 Connection timed out, will keep trying'],
  }[kind];
  return crlf(`From: MAILER-DAEMON@mx.simulated.localhost (Mail Delivery System)
To: ${to}
Message-ID: <${crypto.randomUUID()}@mx.simulated.localhost>
Date: ${new Date().toUTCString()}
Subject: ${action === 'delayed' ? 'Delayed Mail (still being retried)' : 'Undelivered Mail Returned to Sender'}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="simulated-report"

--simulated-report
Content-Type: text/plain; charset=us-ascii

This report was made by npm run simulate (postcode's local development).

<${address}>: ${diagnostic}

--simulated-report
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.simulated.localhost

Final-Recipient: rfc822; ${address}
Action: ${action}
Status: ${status}
Diagnostic-Code: smtp; ${diagnostic}

--simulated-report
Content-Type: text/rfc822-headers

Message-ID: ${mail.messageId}
To: ${address}
Subject: ${mail.subject}

--simulated-report--
`);
}

function feedbackReport(to, mail) {
  return crlf(`From: feedback-loop@simulated.localhost
To: ${to}
Message-ID: <${crypto.randomUUID()}@simulated.localhost>
Date: ${new Date().toUTCString()}
Subject: Abuse report
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="simulated-report"

--simulated-report
Content-Type: text/plain

A recipient marked this message as spam (npm run simulate).

--simulated-report
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: postcode-simulate/1
Version: 1
Original-Rcpt-To: <${address}>

--simulated-report
Content-Type: message/rfc822

Message-ID: ${mail.messageId}
To: ${address}
Subject: ${mail.subject}

(body)
--simulated-report--
`);
}

/** A bounce, a delay or a complaint for a mail postcode sent, to where a real one would go. */
async function simulateReturn() {
  const mail = await sentMail(emailId);
  if (!mail.returnPath.startsWith('bounces+')) {
    console.error(`the mail's envelope sender is ${mail.returnPath}: not a return path postcode reads`);
    process.exit(1);
  }
  const returnPathDomain = mail.returnPath.split('@')[1];
  // Complaints come from a feedback loop to the feedback address (FEEDBACK_ADDRESS, default fbl).
  const to = kind === 'complaint' ? `${process.env.FEEDBACK_ADDRESS ?? 'fbl'}@${returnPathDomain}` : mail.returnPath;
  const raw = kind === 'complaint' ? feedbackReport(to, mail) : deliveryStatusNotification(to, mail);
  const from = kind === 'complaint' ? 'feedback-loop@simulated.localhost' : 'MAILER-DAEMON@mx.simulated.localhost';
  const { baseUrl } = readyService();
  const res = await handToWorker(baseUrl, from, to, raw);
  console.log(`${kind} for ${address} posted to ${to}: HTTP ${res.status}`);
  console.log(`see it: curl -s ${baseUrl}/api/v1/emails/${emailId} -H "Authorization: Bearer <mail key>"`);
  process.exit(res.status < 300 ? 0 : 1);
}

if (kind === 'inbound') {
  await import('./simulate-inbound.mjs');
} else {
  if (!KINDS.includes(kind) || !/^em_[a-z2-7]{20}$/.test(emailId ?? '') || !address?.includes('@')) {
    console.error(`usage: npm run simulate -- <${KINDS.join('|')}> <emailId> <address>`);
    console.error(
      '       npm run simulate -- inbound <to> [--from <address>] [--subject <text>] [--in-reply-to <emailId>]',
    );
    process.exit(2);
  }
  await simulateReturn();
}
