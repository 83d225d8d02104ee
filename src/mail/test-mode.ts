// Test keys (`pc_test_…`): their mail runs the whole pipeline — validation, the send log, events, webhooks —
// but never opens SMTP. Two recipients simulate what a real server could answer.
import type { RecipientRefusal } from './outgoing';
import { outcomeOfRefusals, type SmtpOutcome } from './smtp/connection';

export const TEST_RECIPIENTS = {
  /** Refused for good at RCPT TO (550): the recipient ends FAILED. */
  bounce: 'bounce@postcode.test',
  /** Refused for now at RCPT TO (451): the recipient waits for the retries, then ends FAILED. */
  tempfail: 'tempfail@postcode.test',
} as const;

const REFUSALS: Record<string, Omit<RecipientRefusal, 'email'>> = {
  [TEST_RECIPIENTS.bounce]: { reply: '550 5.1.1 Mailbox unavailable (simulated: test key)', permanent: true },
  [TEST_RECIPIENTS.tempfail]: { reply: '451 4.2.1 Mailbox busy, try later (simulated: test key)', permanent: false },
};

/** The outcome a server would give for these recipients: refusals for the special addresses, else accepted. */
export function simulatedOutcome(recipients: string[]): SmtpOutcome {
  const refused = recipients.flatMap((email) => {
    const refusal = REFUSALS[email.toLowerCase()];
    return refusal ? [{ email, ...refusal }] : [];
  });
  return outcomeOfRefusals(recipients.length, refused);
}
