// What comes back after the relay, whoever reports it (a provider's event, a DSN or a feedback report mailed
// to the return path), and what it does to a recipient: a pure rule, applied in one D1 transaction by
// src/db/delivery-events.ts.
//
// SENT → DELIVERED, BOUNCED (hard, soft or undetermined) or COMPLAINED; DELIVERED → BOUNCED (a mailbox that
// took the mail and bounced it later) or COMPLAINED; a soft or undetermined bounce becomes hard. Only a hard
// bounce suppresses the address (src/mail/bounce-reasons.ts says which reasons are hard). A provider that took
// a message and then could not send it at all (its own failure, or its suppression list) moves SENT to FAILED
// or SUPPRESSED. Nothing else moves: a final state is never downgraded by a late or repeated event. A deferral
// changes no status (the timeline notes it).
import { type BounceReason, type BounceType, bounceTypeOf } from './bounce-reasons';
import type { EmailEventType, RecipientStatus } from './outcome';

export type { BounceReason, BounceType };
export type DeliveryEventKind = 'delivered' | 'deferred' | 'bounced' | 'complained' | 'failed' | 'suppressed';

/** Which message a report is about: postcode's email id, or the message id a provider answered. */
export type EventTarget = { emailId: string } | { providerId: string };

export type DeliveryEvent = {
  target: EventTarget;
  /** The recipient as the report names it. */
  recipient: string;
  kind: DeliveryEventKind;
  /** For `bounced`: hard (permanent), soft (given up after temporary failures), undetermined; default: the reason's. */
  bounceType?: BounceType;
  /** For `bounced`: why, in the vocabulary of src/mail/bounce-reasons.ts. */
  bounceReason?: BounceReason;
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
  /** A bounce's reason (`undetermined` when the report gave none); null for anything else. */
  bounceReason: BounceReason | null;
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

/** A change that is no bounce. */
const change = (
  status: RecipientStatus,
  timeline: EmailEventType,
  webhook: RecipientChange['webhook'],
  suppress: RecipientChange['suppress'] = null,
): RecipientChange => ({ status, bounceType: null, bounceReason: null, timeline, webhook, suppress });

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
      return status === 'SENT' ? change(status, 'deferred', 'email.deferred') : 'ignore';
    case 'delivered':
      return status === 'SENT' ? change('DELIVERED', 'delivered', 'email.delivered') : 'ignore';
    case 'failed':
      return status === 'SENT' ? change('FAILED', 'failed', 'email.failed') : 'ignore';
    case 'suppressed':
      return status === 'SENT' ? change('SUPPRESSED', 'suppressed', 'email.suppressed') : 'ignore';
    case 'complained':
      return reached ? change('COMPLAINED', 'complained', 'email.complained', 'complaint') : 'ignore';
    case 'bounced': {
      const bounceReason = event.bounceReason ?? 'undetermined';
      const bounceType = event.bounceType ?? bounceTypeOf(bounceReason);
      const harder = status === 'BOUNCED' && current.bounceType !== 'hard' && bounceType === 'hard';
      if (!reached && !harder) return 'ignore';
      // Only an address that cannot receive is suppressed: a soft or undetermined bounce may take the next mail.
      const suppress = bounceType === 'hard' ? 'hard_bounce' : null;
      return { status: 'BOUNCED', bounceType, bounceReason, timeline: 'bounced', webhook: 'email.bounced', suppress };
    }
  }
}
