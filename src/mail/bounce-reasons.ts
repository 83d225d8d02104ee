// Why a recipient bounced, in one vocabulary modelled on the field's reference parser (sisimai's reasons),
// and which reasons mean the address itself cannot receive. Only those suppress the address (`hard_bounce`):
// a full mailbox, a message too large, an expiry, a block or a spam verdict is about this message or the
// sender, and the address may take the next one (RFC 3463 calls x.2.2 and x.2.3 persistent transient).

/** Reasons that say the address cannot receive mail: a hard bounce, suppressed. */
export const HARD_BOUNCE_REASONS = ['user_unknown', 'host_unknown', 'has_moved', 'not_accept'] as const;

/** Reasons about the mailbox's state, this message, the sender or the path: a soft bounce, never suppressed. */
export const SOFT_BOUNCE_REASONS = [
  'mailbox_full',
  'message_too_large',
  'suspended',
  'expired',
  'blocked',
  'spam_detected',
  'virus_detected',
  'policy',
  'content_rejected',
  'filtered',
  'sender_rejected',
  'auth_failure',
  'relay_denied',
  'security_error',
  'rate_limited',
  'network_error',
  'system_error',
  'syntax_error',
] as const;

export const BOUNCE_REASONS = [...HARD_BOUNCE_REASONS, ...SOFT_BOUNCE_REASONS, 'undetermined'] as const;

export type BounceReason = (typeof BOUNCE_REASONS)[number];
export type BounceType = 'hard' | 'soft' | 'undetermined';

/** Reasons that are the sending side's problem (its reputation, its authentication): shown apart in figures. */
export const SENDER_PROBLEM_REASONS: readonly BounceReason[] = ['blocked', 'spam_detected', 'auth_failure', 'policy'];

const HARD = new Set<string>(HARD_BOUNCE_REASONS);

/** The bounce type a reason implies. */
export function bounceTypeOf(reason: BounceReason): BounceType {
  if (HARD.has(reason)) return 'hard';
  return reason === 'undetermined' ? 'undetermined' : 'soft';
}
