// Reading bounces and complaints (src/mail/reports.ts) as postal-mime parses them: RFC 3464 and RFC 5965
// reports, and the layouts of Postfix, Exim, Gmail, Microsoft and Yahoo (fixtures in test/support/reports.ts).
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { fieldBlocks, readReport } from '../../src/mail/reports';
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
  readReport(await PostalMime.parse(fixture.raw, { forceRfc822Attachments: true, attachmentEncoding: 'utf8' }));

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
      { address: RECIPIENT, kind: 'bounced', bounceType: 'soft', diagnostic: '450 4.4.7 Message expired' },
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
