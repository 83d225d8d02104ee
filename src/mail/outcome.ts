// What one delivery attempt means for an email and each of its recipients (a pure function: the queue
// consumer stores its result in one transaction).
//
// The rule: each recipient has its own status. QUEUED waits (not tried yet, or refused for now with a 4xx);
// SENT: a route accepted the message for it; FAILED: refused for good (5xx), or still waiting when the
// attempts ran out; SUPPRESSED: on the account's suppression list, skipped. What comes back after the relay
// (src/mail/delivery-events.ts) moves a SENT recipient on to DELIVERED, BOUNCED or COMPLAINED.
// The email is QUEUED while a recipient waits; DELIVERED when every recipient was delivered (a complaint
// means it was); BOUNCED when every recipient bounced or failed and at least one bounced; SENT when at least
// one recipient got it otherwise; SUPPRESSED if every one was skipped; else FAILED.
import type { RecipientRefusal } from './outgoing';
import type { SmtpOutcome } from './smtp/connection';

export type RecipientStatus =
  | 'QUEUED'
  | 'SENT'
  | 'FAILED'
  | 'SUPPRESSED'
  | 'CANCELED'
  | 'DELIVERED'
  | 'BOUNCED'
  | 'COMPLAINED';
/** What the email as a whole can be after an attempt or an event (a complaint is a recipient's). */
export type SettledStatus = Exclude<RecipientStatus, 'COMPLAINED'>;
/** SCHEDULED waits for its time (nothing sends it before); CANCELED was called off while SCHEDULED. */
export type EmailStatus = SettledStatus | 'SCHEDULED';

export type Recipient = {
  position: number;
  address: string;
  canonical: string;
  status: RecipientStatus;
  reply: string | null;
  /** The delivery route that took it (or last refused it). */
  route?: string | null;
  /** The provider's message id for it, which the provider's events name. */
  providerId?: string | null;
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
  | 'recovered'
  | 'rerouted'
  | 'delivered'
  | 'bounced'
  | 'complained';
/** A timeline entry; `route`: the delivery route it happened on, where one did. */
export type EmailEvent = { type: EmailEventType; detail: string | null; route?: string | null };

export type AttemptResult = {
  /** Every recipient with its status after the attempt. */
  recipients: Recipient[];
  status: SettledStatus;
  /** The server's reply worth keeping on the email (null when everything was accepted). */
  reply: string | null;
  /** Canonical addresses refused for good at RCPT TO: they join the suppression list. */
  suppress: string[];
  events: EmailEvent[];
};

const REACHED = new Set<RecipientStatus>(['SENT', 'DELIVERED', 'BOUNCED', 'COMPLAINED']);

/** The email's status from its recipients' (the same rule as `EMAIL_STATUS_SQL` in src/db/delivery-events.ts). */
export function emailStatusOf(recipients: Pick<Recipient, 'status'>[]): SettledStatus {
  const all = (...statuses: RecipientStatus[]) => recipients.every((r) => statuses.includes(r.status));
  if (recipients.some((r) => r.status === 'QUEUED')) return 'QUEUED';
  if (all('DELIVERED', 'COMPLAINED')) return 'DELIVERED';
  if (all('BOUNCED', 'FAILED') && recipients.some((r) => r.status === 'BOUNCED')) return 'BOUNCED';
  if (recipients.some((r) => REACHED.has(r.status))) return 'SENT';
  if (all('SUPPRESSED')) return 'SUPPRESSED';
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

/** An outcome with the route that gave it, the provider's ids and the routes failed over before it. */
export type RoutedOutcome = SmtpOutcome & {
  route?: string | null;
  providerIds?: Record<string, string>;
  failovers?: { route: string; reply: string }[];
};

/**
 * Applies one outcome to the recipients it was sent to (the waiting ones). `lastAttempt`: recipients still
 * waiting afterwards are FAILED with their last reply instead. A recipient a provider refused as on its own
 * suppression list is SUPPRESSED; one refused for good at RCPT TO joins the account's list.
 */
export function settleAttempt(recipients: Recipient[], outcome: RoutedOutcome, lastAttempt: boolean): AttemptResult {
  const refusals = new Map<string, RecipientRefusal>((outcome.refused ?? []).map((r) => [r.email, r]));
  const route = outcome.route ?? null;
  const suppress: string[] = [];
  const events: EmailEvent[] = (outcome.failovers ?? []).map((f) => ({
    type: 'rerouted',
    detail: f.reply,
    route: f.route,
  }));
  const sent: string[] = [];
  const deferred: Recipient[] = [];
  const updated = recipients.map((r): Recipient => {
    if (r.status !== 'QUEUED') return r;
    const refusal = refusals.get(r.address);
    const tried = { ...r, route, providerId: outcome.providerIds?.[r.address] ?? r.providerId ?? null };
    let next: Recipient;
    if (refusal?.suppressed) next = { ...tried, status: 'SUPPRESSED', reply: refusal.reply };
    else if (refusal?.permanent) {
      suppress.push(r.canonical);
      next = { ...tried, status: 'FAILED', reply: refusal.reply };
    } else if (refusal) next = { ...tried, status: 'QUEUED', reply: refusal.reply };
    else if (outcome.kind === 'accepted') next = { ...tried, status: 'SENT', reply: null };
    else if (outcome.kind === 'permanent') next = { ...tried, status: 'FAILED', reply: outcome.reply };
    else next = { ...tried, status: 'QUEUED', reply: outcome.reply };
    if (next.status === 'QUEUED' && lastAttempt) next = { ...next, status: 'FAILED' };
    if (next.status === 'SENT') sent.push(r.address);
    if (next.status === 'FAILED') events.push({ type: 'failed', detail: `${r.address}: ${next.reply}`, route });
    if (next.status === 'SUPPRESSED') events.push({ type: 'suppressed', detail: `${r.address}: ${next.reply}`, route });
    if (next.status === 'QUEUED') deferred.push(next);
    return next;
  });
  if (sent.length > 0)
    events.splice(outcome.failovers?.length ?? 0, 0, { type: 'sent', detail: sent.join(', '), route });
  if (deferred.length > 0) events.push({ type: 'deferred', detail: deferred[0]!.reply, route });
  const reply = outcome.kind === 'accepted' ? (outcome.refused?.[0]?.reply ?? null) : outcome.reply;
  return { recipients: updated, status: emailStatusOf(updated), reply, suppress, events };
}
