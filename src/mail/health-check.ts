import type { MailRequest } from './compose';

/**
 * The fixed message of POST /api/v1/templates/send-test: proves the account can get mail out.
 * The account name goes in through a variable, so it is HTML-escaped like any template value.
 */
export function healthCheckMessage(
  accountName: string,
  now: Date,
): Pick<MailRequest, 'subject' | 'text' | 'html' | 'vars'> {
  const sentence = 'It was queued at {{queuedAt}}. If you can read it, mail from this account is being delivered.';
  return {
    subject: 'postcode test email',
    text: `This is a test email from postcode for the account "{{account}}".\n\n${sentence}\n`,
    html: `<p>This is a test email from postcode for the account <strong>{{account}}</strong>.</p><p>${sentence}</p>`,
    vars: { account: accountName, queuedAt: now.toISOString() },
  };
}
