// Reading bounces and complaints (src/mail/reports.ts) as postal-mime parses them: RFC 3464 and RFC 5965
// reports, and the layouts of Postfix, Exim, Gmail, Microsoft and Yahoo (fixtures in test/support/reports.ts).
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { fieldBlocks, PARSE_OPTIONS, readReport } from '../../src/mail/reports';
import {
  abuseReport,
  autoReply,
  eximBounce,
  gmailBounce,
  microsoftBounce,
  postfixBounce,
  type ReportFixture,
  yahooBounce,
} from '../support/reports';

const TO = 'bounces+em_aaaaaaaaaaaaaaaaaaaa-aaaaaaaaaaaaaaaa@pc-bounces.example.com';
const MESSAGE_ID = '<em_bbbbbbbbbbbbbbbbbbbb@postcode.dev>';
const RECIPIENT = 'Nobody.Here@example.net';

const read = async (fixture: ReportFixture) =>
  readReport(await PostalMime.parse(fixture.raw, PARSE_OPTIONS), fixture.raw);

describe('readReport', () => {
  it.each([
    ['Postfix (RFC 3464)', postfixBounce],
    ['Gmail (RFC 3464, message/rfc822 returned)', gmailBounce],
    ['Microsoft (RFC 3464, status 5.1.10)', microsoftBounce],
    ['Exim (plain text)', eximBounce],
    ['Yahoo (plain text)', yahooBounce],
  ])('%s: a hard bounce for the recipient, with the diagnostic and the returned Message-ID', async (_, make) => {
    const report = await read(make({ to: TO, recipient: RECIPIENT, messageId: MESSAGE_ID }));
    expect(report).toEqual({
      recipients: [
        {
          address: expect.stringMatching(/^nobody\.here@example\.net$/i),
          kind: 'bounced',
          bounceType: 'hard',
          bounceReason: 'user_unknown',
          diagnostic: expect.stringMatching(/^5\d\d/),
        },
      ],
      messageId: MESSAGE_ID,
    });
  });

  it('Action failed with a 4.x.x status is a soft bounce; Action delayed a deferral; no status: the diagnostic decides', async () => {
    const soft = await read(
      postfixBounce({ to: TO, recipient: RECIPIENT, status: '4.4.7', diagnostic: '450 4.4.7 Message expired' }),
    );
    expect(soft!.recipients).toEqual([
      {
        address: RECIPIENT,
        kind: 'bounced',
        bounceType: 'soft',
        bounceReason: 'expired',
        diagnostic: '450 4.4.7 Message expired',
      },
    ]);
    const delayed = await read(
      postfixBounce({
        to: TO,
        recipient: RECIPIENT,
        action: 'delayed',
        status: '4.4.1',
        diagnostic: '421 4.4.1 Connection timed out',
      }),
    );
    expect(delayed!.recipients).toEqual([
      { address: RECIPIENT, kind: 'deferred', diagnostic: '421 4.4.1 Connection timed out' },
    ]);
    const plain = await read(yahooBounce({ to: TO, recipient: RECIPIENT }));
    expect(plain!.recipients[0]!.diagnostic).toMatch(/^554: delivery error/);
  });

  it('a feedback report (abuse): a complaint about Original-Rcpt-To, else the returned message’s To', async () => {
    const report = await read(
      abuseReport({ to: 'fbl@pc-bounces.example.com', recipient: RECIPIENT, messageId: MESSAGE_ID }),
    );
    expect(report).toEqual({
      recipients: [{ address: RECIPIENT, kind: 'complained', diagnostic: null }],
      messageId: MESSAGE_ID,
    });
    const noRcpt = await read(
      abuseReport({ to: 'fbl@x.example', recipient: RECIPIENT, messageId: MESSAGE_ID, withRcpt: false }),
    );
    expect(noRcpt!.recipients).toEqual([{ address: RECIPIENT, kind: 'complained', diagnostic: null }]);
  });

  it('a feedback report of another type is no complaint; mail that is no report at all is null', async () => {
    const fixture = abuseReport({ to: 'fbl@x.example', recipient: RECIPIENT, messageId: MESSAGE_ID });
    const notSpam = await read({
      ...fixture,
      raw: fixture.raw.replace('Feedback-Type: abuse', 'Feedback-Type: not-spam'),
    });
    expect(notSpam!.recipients).toEqual([]);
    expect(await read(autoReply(TO))).toBeNull();
  });

  it.each([
    ['5.2.2 mailbox full', '5.2.2', '552 5.2.2 <a@b>: Mailbox full', 'mailbox_full'],
    [
      '5.2.3 message too large',
      '5.2.3',
      '552 5.2.3 Message size exceeds fixed maximum message size',
      'message_too_large',
    ],
    [
      '5.7.1 blocklist',
      '5.7.1',
      '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org',
      'blocked',
    ],
    ['5.7.1 spam', '5.7.1', '550 5.7.1 Message rejected as spam by Content Filtering', 'spam_detected'],
  ])('%s: a soft bounce with its reason, never a hard one', async (_, status, diagnostic, reason) => {
    const report = await read(postfixBounce({ to: TO, recipient: RECIPIENT, status, diagnostic }));
    expect(report!.recipients).toEqual([
      {
        address: RECIPIENT,
        kind: 'bounced',
        bounceType: 'soft',
        bounceReason: reason,
        diagnostic: expect.stringMatching(new RegExp(`^${diagnostic.slice(0, 10)}`)),
      },
    ]);
  });

  it('prose: Exim’s retry timeout without a code is an expiry; only the listed address fails, never the returned message’s', async () => {
    const raw = `From: Mail Delivery System <Mailer-Daemon@mx.example.net>
To: ${TO}
Subject: Mail delivery failed: returning message to sender
Content-Type: text/plain

This message was created automatically by mail delivery software.

A message that you sent could not be delivered to one or more of its
recipients. This is a permanent error. The following address(es) failed:

  ${RECIPIENT}
    retry timeout exceeded

------ This is a copy of the message, including all the headers. ------

Return-path: <${TO}>
Message-ID: ${MESSAGE_ID}
To: ${RECIPIENT},
  colleague@example.net,
  <other@example.org>
Cc: "Boss"
  <boss@example.com>
Subject: Your receipt

See <mailto:help@example.com>
help@example.com<mailto:help@example.com>
`.replace(/\n/g, '\r\n');
    const report = await read({ from: '', to: TO, raw });
    expect(report).toEqual({
      recipients: [
        {
          address: RECIPIENT.toLowerCase(),
          kind: 'bounced',
          bounceType: 'soft',
          bounceReason: 'expired',
          diagnostic: expect.stringContaining('retry timeout exceeded'),
        },
      ],
      messageId: MESSAGE_ID,
    });
  });

  it('status parts as servers write them: no blank line between recipients, Original- beside Final-Recipient, Action failure or expired', async () => {
    const raw = `From: MAILER-DAEMON@mx.example.net
To: ${TO}
Subject: Undeliverable
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

Delivery failed.

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net

Original-Recipient: rfc822;first@example.net
Final-Recipient: rfc822;first.forwarded@example.org
Action: failure
Status: 5.1.1
Final-Recipient: rfc822;second@example.net
Action: expired
Status:
--B--
`.replace(/\n/g, '\r\n');
    const report = await read({ from: '', to: TO, raw });
    expect(report!.recipients).toEqual([
      {
        address: 'first@example.net',
        alternates: ['first.forwarded@example.org'],
        kind: 'bounced',
        bounceType: 'hard',
        bounceReason: 'user_unknown',
        diagnostic: null,
      },
      { address: 'second@example.net', kind: 'bounced', bounceType: 'soft', bounceReason: 'expired', diagnostic: null },
    ]);
  });

  it('a DSN forwarded inside a message/rfc822 part is read', async () => {
    const inner = postfixBounce({ to: TO, recipient: RECIPIENT, messageId: MESSAGE_ID }).raw;
    const raw = `From: admin@example.org
To: ${TO}
Subject: Fwd: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="F"

--F
Content-Type: text/plain

See below.

--F
Content-Type: message/rfc822

${inner}
--F--
`.replace(/\r?\n/g, '\r\n');
    const report = await read({ from: '', to: TO, raw });
    expect(report).toMatchObject({
      recipients: [{ address: RECIPIENT, kind: 'bounced', bounceType: 'hard', bounceReason: 'user_unknown' }],
      messageId: MESSAGE_ID,
    });
  });

  it('a feedback report: every Original-Rcpt-To is complained; a redacted one names nobody', async () => {
    const fixture = abuseReport({ to: 'fbl@x.example', recipient: RECIPIENT, messageId: MESSAGE_ID });
    const two = await read({
      ...fixture,
      raw: fixture.raw.replace(
        /Original-Rcpt-To: (.*)\r\n/,
        'Original-Rcpt-To: $1\r\nOriginal-Rcpt-To: <second@example.net>\r\n',
      ),
    });
    expect(two!.recipients.map((r) => r.address)).toEqual([RECIPIENT, 'second@example.net']);
    const redacted = abuseReport({ to: 'fbl@x.example', recipient: 'redacted', messageId: MESSAGE_ID });
    expect((await read(redacted))!.recipients).toEqual([{ address: null, kind: 'complained', diagnostic: null }]);
  });

  it('fields: folded lines joined, names lower-cased, the first of a repeated field kept, blocks apart', () => {
    expect(fieldBlocks('A: 1\nB-Field: two\n  lines\nA: again\n\nC: 3\n')).toEqual([
      new Map([
        ['a', '1'],
        ['b-field', 'two lines'],
      ]),
      new Map([['c', '3']]),
    ]);
  });
});
