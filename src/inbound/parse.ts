// What a received message says about itself, from postal-mime's parse: addresses, the thread it names, how the
// receiving hop judged it (Authentication-Results), and whether a machine sent it (auto-reply, delivery report).
import type { Address, Email } from 'postal-mime';
import type { Authentication, MailboxData } from '../webhooks/events';

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

/** A delivery status notification (or another report) rather than a person's mail. */
export function isDeliveryReport(email: Email): boolean {
  return /^\s*multipart\/report\b/i.test(header(email, 'content-type') ?? '');
}
