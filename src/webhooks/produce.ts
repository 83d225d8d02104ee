// Turning facts into webhook events: which events an email's attempt or an OTP session produces, and
// recording events that have no transaction of their own to join.

import type { BounceReason, BounceType } from '../mail/bounce-reasons';
import type { AttemptResult, Recipient } from '../mail/outcome';
import type { OtpChannel } from '../otp/session';
import type { EmailRecord } from '../store/account/emails';
import type { EmailEventData, EventType, SuppressionEventData, WebhookEvent } from './events';

type EmailFacts = Pick<EmailRecord, 'id' | 'toAddresses' | 'subject' | 'tags' | 'test'>;

const emailData = (email: EmailFacts, status: string, extra: Partial<EmailEventData> = {}): EmailEventData => ({
  emailId: email.id,
  to: email.toAddresses,
  subject: email.subject,
  status,
  tags: email.tags,
  test: email.test,
  ...extra,
});

/** Accepted: QUEUED, or SCHEDULED for later. */
export const emailQueuedEvent = (email: EmailFacts & { scheduledAt: string | null }): WebhookEvent => ({
  type: 'email.queued',
  data: emailData(email, email.scheduledAt ? 'SCHEDULED' : 'QUEUED'),
});

export const emailCanceledEvent = (email: EmailFacts): WebhookEvent => ({
  type: 'email.canceled',
  data: emailData(email, 'CANCELED'),
});

const EVENT_OF_STATUS = {
  SENT: 'email.sent',
  FAILED: 'email.failed',
  SUPPRESSED: 'email.suppressed',
  CANCELED: 'email.canceled',
  DELIVERED: 'email.delivered',
  BOUNCED: 'email.bounced',
  COMPLAINED: 'email.complained',
} as const;

export const suppressionEvent = (
  type: 'suppression.added' | 'suppression.removed',
  data: SuppressionEventData,
): WebhookEvent => ({ type, data });

/**
 * One event per recipient whose outcome this attempt decided (sent, failed, suppressed), and one
 * `email.deferred` per recipient refused for now; `status` is the email's status after the attempt. A
 * recipient refused for good at RCPT TO joins the suppression list: `suppression.added` (never for test mail).
 */
export function emailAttemptEvents(email: EmailRecord, before: Recipient[], result: AttemptResult): WebhookEvent[] {
  const events: WebhookEvent[] = [];
  result.recipients.forEach((after, index) => {
    const previous = before[index];
    if (previous?.status !== 'QUEUED') return;
    const extra = {
      recipient: after.address,
      ...(after.reply ? { reply: after.reply } : {}),
      ...(after.route === undefined ? {} : { route: after.route }),
    };
    if (after.status === 'QUEUED') {
      if (after.reply) events.push({ type: 'email.deferred', data: emailData(email, result.status, extra) });
      return;
    }
    events.push({ type: EVENT_OF_STATUS[after.status], data: emailData(email, result.status, extra) });
  });
  if (!email.test) {
    for (const canonical of result.suppress) {
      const data = { email: canonical, reason: 'rcpt_rejected', emailId: email.id, expiresAt: null };
      events.push(suppressionEvent('suppression.added', data));
    }
  }
  return events;
}

/** A report after the relay as its webhook tells it; a bounce's type and reason, null for anything else. */
export type DeliveryReport = {
  recipient: string;
  route: string | null;
  bounceType: BounceType | null;
  bounceReason: BounceReason | null;
  diagnostic: string | null;
};

/** The webhook events of a report after the relay: the recipient's, and a suppression it adds. */
export function deliveryReportEvents(
  email: EmailRecord,
  type: Exclude<Extract<EventType, `email.${string}`>, 'email.received'>,
  status: string,
  report: DeliveryReport,
  suppression: SuppressionEventData | null,
): WebhookEvent[] {
  const data = emailData(email, status, {
    recipient: report.recipient,
    route: report.route,
    ...(report.bounceType ? { bounceType: report.bounceType } : {}),
    ...(report.bounceReason ? { bounceReason: report.bounceReason } : {}),
    ...(report.diagnostic ? { diagnostic: report.diagnostic } : {}),
  });
  return [{ type, data }, ...(suppression ? [suppressionEvent('suppression.added', suppression)] : [])];
}

export const otpEvent = (
  type: 'otp.sent' | 'otp.verified' | 'otp.locked' | 'email_verification.verified',
  session: { sessionId: string; email: string; channel: OtpChannel },
): WebhookEvent => ({
  type,
  data: { sessionId: session.sessionId, email: session.email, channel: session.channel },
});
