// A bounce in words, for the dashboard: its type and its reason (src/mail/bounce-reasons.ts), as a member reads
// them beside a recipient's status.
import type { BounceReason, BounceType } from '../../mail/bounce-reasons';

const WORDS: Record<BounceReason, string> = {
  user_unknown: 'no such mailbox',
  host_unknown: 'no such domain',
  has_moved: 'address moved',
  not_accept: 'domain takes no mail',
  mailbox_full: 'mailbox full',
  message_too_large: 'message too large',
  suspended: 'mailbox suspended',
  expired: 'gave up retrying',
  blocked: 'sender blocked',
  spam_detected: 'taken for spam',
  virus_detected: 'virus found',
  policy: 'refused by policy',
  content_rejected: 'content refused',
  filtered: 'filtered out',
  sender_rejected: 'sender refused',
  auth_failure: 'authentication failed',
  relay_denied: 'relay denied',
  security_error: 'TLS or security error',
  rate_limited: 'rate limited',
  network_error: 'network error',
  system_error: 'server error',
  syntax_error: 'SMTP syntax error',
  undetermined: 'reason unknown',
};

/** "soft, mailbox full"; a bounce recorded without a reason shows its type alone. */
export const bounceWords = (type: BounceType, reason: BounceReason | undefined) =>
  reason ? `${type}, ${WORDS[reason]}` : type;
