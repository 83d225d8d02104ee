// What one delivery attempt means for an email and each of its recipients (a pure function: the queue
// consumer stores its result in one transaction).
//
// The rule: each recipient has its own status. QUEUED waits (not tried yet, or refused for now with a 4xx);
// SENT: the server accepted the message for it; FAILED: refused for good (5xx), or still waiting when the
// attempts ran out; SUPPRESSED: on the account's suppression list, skipped. The email is QUEUED while a
// recipient waits, then SENT if at least one recipient got it, SUPPRESSED if every one was skipped, else FAILED.
import type { RecipientRefusal } from './outgoing';
import type { SmtpOutcome } from './smtp/connection';

export type RecipientStatus = 'QUEUED' | 'SENT' | 'FAILED' | 'SUPPRESSED' | 'CANCELED';
/** SCHEDULED waits for its time (nothing sends it before); CANCELED was called off while SCHEDULED. */
export type EmailStatus = RecipientStatus | 'SCHEDULED';

export type Recipient = {
  position: number;
  address: string;
  canonical: string;
  status: RecipientStatus;
  reply: string | null;
};

export type EmailEventType =
  | 'queued'
  | 'scheduled'
  | 'rescheduled'
  | 'canceled'
  | 'held'
  | 'released'
  | 'deferred'
  | 'sent'
  | 'failed'
  | 'suppressed'
  | 'recovered';
export type EmailEvent = { type: EmailEventType; detail: string | null };

export type AttemptResult = {
  /** Every recipient with its status after the attempt. */
  recipients: Recipient[];
  status: RecipientStatus;
  /** The server's reply worth keeping on the email (null when everything was accepted). */
  reply: string | null;
  /** Canonical addresses refused for good at RCPT TO: they join the suppression list. */
  suppress: string[];
  events: EmailEvent[];
};

export function emailStatusOf(recipients: Recipient[]): RecipientStatus {
  const statuses = new Set(recipients.map((r) => r.status));
  if (statuses.has('QUEUED')) return 'QUEUED';
  if (statuses.has('SENT')) return 'SENT';
  if (statuses.size === 1 && statuses.has('SUPPRESSED')) return 'SUPPRESSED';
  return 'FAILED';
}

/** Waiting recipients whose address is suppressed are skipped before any SMTP. */
export function skipSuppressed(recipients: Recipient[], suppressed: ReadonlySet<string>): AttemptResult {
  const events: EmailEvent[] = [];
  const updated = recipients.map((r) => {
    if (r.status !== 'QUEUED' || !suppressed.has(r.canonical)) return r;
    events.push({ type: 'suppressed', detail: r.address });
    return { ...r, status: 'SUPPRESSED' as const, reply: null };
  });
  return { recipients: updated, status: emailStatusOf(updated), reply: null, suppress: [], events };
}

/**
 * Applies one SMTP outcome to the recipients it was sent to (the waiting ones). `lastAttempt`: recipients
 * still waiting afterwards are FAILED with their last reply instead.
 */
export function settleAttempt(recipients: Recipient[], outcome: SmtpOutcome, lastAttempt: boolean): AttemptResult {
  const refusals = new Map<string, RecipientRefusal>((outcome.refused ?? []).map((r) => [r.email, r]));
  const suppress: string[] = [];
  const events: EmailEvent[] = [];
  const sent: string[] = [];
  const deferred: Recipient[] = [];
  const updated = recipients.map((r): Recipient => {
    if (r.status !== 'QUEUED') return r;
    const refusal = refusals.get(r.address);
    let next: Recipient;
    if (refusal?.permanent) {
      suppress.push(r.canonical);
      next = { ...r, status: 'FAILED', reply: refusal.reply };
    } else if (refusal) next = { ...r, status: 'QUEUED', reply: refusal.reply };
    else if (outcome.kind === 'accepted') next = { ...r, status: 'SENT', reply: null };
    else if (outcome.kind === 'permanent') next = { ...r, status: 'FAILED', reply: outcome.reply };
    else next = { ...r, status: 'QUEUED', reply: outcome.reply };
    if (next.status === 'QUEUED' && lastAttempt) next = { ...next, status: 'FAILED' };
    if (next.status === 'SENT') sent.push(r.address);
    if (next.status === 'FAILED') events.push({ type: 'failed', detail: `${r.address}: ${next.reply}` });
    if (next.status === 'QUEUED') deferred.push(next);
    return next;
  });
  if (sent.length > 0) events.unshift({ type: 'sent', detail: sent.join(', ') });
  if (deferred.length > 0) events.push({ type: 'deferred', detail: deferred[0]!.reply });
  const reply = outcome.kind === 'accepted' ? (outcome.refused?.[0]?.reply ?? null) : outcome.reply;
  return { recipients: updated, status: emailStatusOf(updated), reply, suppress, events };
}
