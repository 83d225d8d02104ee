// What comes back after the relay, whoever reports it (a provider's event, a DSN or a feedback report mailed
// to the return path), and what it does to a recipient: a pure rule, applied in one D1 transaction by
// src/db/delivery-events.ts.
//
// SENT → DELIVERED, BOUNCED (hard or soft) or COMPLAINED; DELIVERED → BOUNCED (a mailbox that took the mail
// and bounced it later) or COMPLAINED; a soft bounce becomes hard. A provider that took a message and then
// could not send it at all (its own failure, or its suppression list) moves SENT to FAILED or SUPPRESSED.
// Nothing else moves: a final state is never downgraded by a late or repeated event. A deferral changes no
// status (the timeline notes it).
import type { EmailEventType, RecipientStatus } from './outcome';

export type BounceType = 'hard' | 'soft';
export type DeliveryEventKind = 'delivered' | 'deferred' | 'bounced' | 'complained' | 'failed' | 'suppressed';

/** Which message a report is about: postcode's email id, or the message id a provider answered. */
export type EventTarget = { emailId: string } | { providerId: string };

export type DeliveryEvent = {
  target: EventTarget;
  /** The recipient as the report names it. */
  recipient: string;
  kind: DeliveryEventKind;
  /** For `bounced`: hard (permanent) or soft (given up after temporary failures). */
  bounceType?: BounceType;
  /** The remote server's words, as reported (Diagnostic-Code, the provider's SMTP response). */
  diagnostic: string | null;
  /** The route it came back through (the provider's route, or the return path's). */
  route: string | null;
};

/** A recipient as the rule sees it. */
export type RecipientState = { status: RecipientStatus; bounceType: BounceType | null };

export type RecipientChange = {
  status: RecipientStatus;
  bounceType: BounceType | null;
  timeline: EmailEventType;
  /** The webhook event it produces. */
  webhook:
    | 'email.delivered'
    | 'email.bounced'
    | 'email.complained'
    | 'email.deferred'
    | 'email.failed'
    | 'email.suppressed';
  /** The suppression it adds (test mail never adds one). */
  suppress: 'hard_bounce' | 'complaint' | null;
};

/**
 * What an event does to a recipient: a change, `wait` (the send it reports on is not recorded yet: apply it
 * again later) or `ignore` (it changes nothing: repeated, late, or about a recipient that was never sent).
 */
export function changeOf(current: RecipientState, event: DeliveryEvent): RecipientChange | 'wait' | 'ignore' {
  const { status } = current;
  if (status === 'QUEUED') return 'wait';
  const reached = status === 'SENT' || status === 'DELIVERED';
  switch (event.kind) {
    case 'deferred':
      return status === 'SENT'
        ? { status, bounceType: null, timeline: 'deferred', webhook: 'email.deferred', suppress: null }
        : 'ignore';
    case 'delivered':
      return status === 'SENT'
        ? { status: 'DELIVERED', bounceType: null, timeline: 'delivered', webhook: 'email.delivered', suppress: null }
        : 'ignore';
    case 'failed':
      return status === 'SENT'
        ? { status: 'FAILED', bounceType: null, timeline: 'failed', webhook: 'email.failed', suppress: null }
        : 'ignore';
    case 'suppressed':
      return status === 'SENT'
        ? {
            status: 'SUPPRESSED',
            bounceType: null,
            timeline: 'suppressed',
            webhook: 'email.suppressed',
            suppress: null,
          }
        : 'ignore';
    case 'complained':
      return reached
        ? {
            status: 'COMPLAINED',
            bounceType: null,
            timeline: 'complained',
            webhook: 'email.complained',
            suppress: 'complaint',
          }
        : 'ignore';
    case 'bounced': {
      const bounceType = event.bounceType ?? 'hard';
      const harder = status === 'BOUNCED' && current.bounceType === 'soft' && bounceType === 'hard';
      if (!reached && !harder) return 'ignore';
      const suppress = bounceType === 'hard' ? 'hard_bounce' : null;
      return { status: 'BOUNCED', bounceType, timeline: 'bounced', webhook: 'email.bounced', suppress };
    }
  }
}
