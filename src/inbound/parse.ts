// What a received message says about itself, from postal-mime's parse: addresses, the thread it names, how the
// receiving hop judged it (Authentication-Results), and whether a machine sent it (auto-reply, delivery report).
import type { Address, Email } from 'postal-mime';
import type { Authentication, MailboxData, ParsedInbound } from '../webhooks/events';

/** The ids of a References / In-Reply-To header, in order, brackets kept. */
export const messageIdsOf = (header: string | undefined): string[] => header?.match(/<[^<>\s]+>/g) ?? [];

/** Every mailbox of an address list, groups flattened; addresses lower-cased. */
export function mailboxes(list: Address[] | Address | undefined): MailboxData[] {
  const all = Array.isArray(list) ? list : list ? [list] : [];
  return all.flatMap((entry) =>
    'group' in entry && Array.isArray(entry.group)
      ? mailboxes(entry.group)
      : 'address' in entry && entry.address
        ? [{ address: entry.address.toLowerCase(), name: entry.name ?? '' }]
        : [],
  );
}

const header = (email: Email, name: string) => email.headers.find((h) => h.key === name)?.value;

/** A result word of RFC 8601 as pass / fail / none / unknown. */
function verdict(word: string | undefined): Authentication {
  switch (word?.toLowerCase()) {
    case 'pass':
      return 'pass';
    case 'fail':
    case 'softfail':
    case 'permerror':
    case 'policy':
      return 'fail';
    case 'none':
    case 'neutral':
      return 'none';
    default:
      return 'unknown';
  }
}

/**
 * SPF, DKIM and DMARC as the receiving hop reported them: the topmost Authentication-Results (the hop that took
 * the message for us writes it first); unknown when there is none.
 */
export function authenticationOf(email: Email): { spf: Authentication; dkim: Authentication; dmarc: Authentication } {
  const results = header(email, 'authentication-results') ?? header(email, 'arc-authentication-results') ?? '';
  const word = (method: string) => new RegExp(`(?:^|[;\\s])${method}\\s*=\\s*([a-z]+)`, 'i').exec(results)?.[1];
  return { spf: verdict(word('spf')), dkim: verdict(word('dkim')), dmarc: verdict(word('dmarc')) };
}

/**
 * Mail a machine sent in answer to other mail: `Auto-Submitted` other than `no` (RFC 3834), or the older marks of
 * vacation responders (`X-Autoreply`, `X-Autorespond`, `Precedence: auto_reply`). Never delivered as an event, so
 * two auto-responders cannot answer each other through postcode.
 */
export function isAutoReply(email: Email): boolean {
  const submitted = header(email, 'auto-submitted')?.trim().toLowerCase();
  if (submitted !== undefined) return submitted !== 'no';
  if (header(email, 'x-autoreply') !== undefined || header(email, 'x-autorespond') !== undefined) return true;
  return header(email, 'precedence')?.trim().toLowerCase() === 'auto_reply';
}

/** The mailboxes servers write their notices from; no person writes as one of them. */
const SYSTEM_MAILBOX = /^(?:mailer-?daemon|mail-?daemon|postmaster|post_master)$/i;
const REPORT_PARTS = /^message\/(?:x?delivery-status|global-delivery-status|feedback-report)$/i;
const localPartOf = (address: string) => address.replace(/^<|>$/g, '').trim().split('@')[0] ?? '';

/**
 * The null reverse-path (RFC 5321 4.5.5) that delivery reports are sent from, given by the envelope or kept by a
 * hop in Return-Path (`<>`, or the MAILER-DAEMON some servers write for it).
 */
export function fromNullSender(envelopeFrom: string, email: Email): boolean {
  const envelope = envelopeFrom.trim();
  if (envelope === '' || envelope === '<>' || SYSTEM_MAILBOX.test(localPartOf(envelope))) return true;
  const returnPath = header(email, 'return-path')?.trim();
  return returnPath !== undefined && (returnPath === '<>' || SYSTEM_MAILBOX.test(localPartOf(returnPath)));
}

/**
 * A delivery status notification (or a feedback report) rather than a person's mail: a `multipart/report`, a
 * status part anywhere, Exim's X-Failed-Recipients, a notice From a server's own mailbox (MAILER-DAEMON,
 * postmaster), or, unless it is an auto-reply, mail from the null sender. A person's mail about a failure, or a
 * bounce a person forwards, is none of these.
 */
export function isDeliveryReport(email: Email, nullSender: boolean, autoReply: boolean): boolean {
  if (/^\s*multipart\/report\b/i.test(header(email, 'content-type') ?? '')) return true;
  if (email.attachments.some((part) => REPORT_PARTS.test(part.mimeType))) return true;
  if (header(email, 'x-failed-recipients') !== undefined) return true;
  const from = email.from && 'address' in email.from ? email.from : undefined;
  if (SYSTEM_MAILBOX.test(localPartOf(from?.address ?? '')) || /^mailer-?daemon$/i.test(from?.name?.trim() ?? '')) {
    return true;
  }
  return nullSender && !autoReply;
}

/** The message's own fields as the API keeps and sends them (its thread is found in the account's store). */
export function parsedOf(email: Email): Omit<ParsedInbound, 'emailId'> {
  return {
    from: mailboxes(email.from)[0] ?? null,
    toList: mailboxes(email.to),
    cc: mailboxes(email.cc),
    replyTo: mailboxes(email.replyTo),
    subject: email.subject ?? null,
    date: email.date ?? null,
    messageId: email.messageId ?? null,
    inReplyTo: messageIdsOf(email.inReplyTo)[0] ?? null,
    references: messageIdsOf(email.references),
    text: email.text ?? null,
    html: email.html ?? null,
    authentication: authenticationOf(email),
  };
}
