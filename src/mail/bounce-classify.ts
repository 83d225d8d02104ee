// Why a recipient bounced, from what the report says: the remote server's words first (they name the
// cause; a status code is often generic), then the enhanced status code (RFC 3463), then the notice's words
// about the recipient, then the reply code. Nothing recognised is `undetermined`. Every doubt falls on the side
// that keeps the address: a 4.x.x status, a refusal of MAIL FROM or HELO, a report that also calls the mailbox
// full, or a bare "user unknown" not known to answer RCPT TO never makes a hard bounce.
import { type BounceReason, type BounceType, bounceTypeOf } from './bounce-reasons';
import { NONEXISTENT, REPLY, STATUS, WEAK_STATUS, WORDS } from './bounce-words';

export type BounceClass = { bounceType: BounceType; bounceReason: BounceReason };

const ENHANCED = /\b[245]\.(\d{1,3}\.\d{1,3})\b/;
const REPLY_CODE = /(?:^|[^\d.])([245]\d\d)(?=[\s-]|$)/;

const matchWords = (text: string) => WORDS.find(([, pattern]) => pattern.test(text))?.[0];
const normal = (text: string | null | undefined) => (text ?? '').toLowerCase().replace(/\s+/g, ' ');

type Command = 'rcpt' | 'data' | 'mail' | 'helo';

/** The SMTP command a refusal answered, where the report says. */
function commandIn(text: string): Command | null {
  if (/\brcpt\b|\[rcpt_to\]|does not like recipient/.test(text)) return 'rcpt';
  if (/(?:after|in reply to|>>>) mail from/.test(text)) return 'mail';
  if (/(?:after|in reply to|>>>) (?:helo|ehlo)|my name was rejected/.test(text)) return 'helo';
  if (/end of data|after data|>>> data|data command/.test(text)) return 'data';
  return null;
}

/**
 * The reason and type of a bounce: `status` is the report's Status field (if any), `words` the server's reply,
 * `context` the notice's words about the recipient, read when the reply names no cause.
 */
export function classifyBounce(
  status: string | null | undefined,
  words: string | null | undefined,
  context?: string | null,
): BounceClass {
  const text = normal(words);
  const around = normal(context);
  // A status field of x.0.0 says less than the code in the server's own words.
  const fromStatus = ENHANCED.exec(status ?? '')?.[1];
  const enhanced =
    (fromStatus === '0.0' ? undefined : fromStatus) ??
    ENHANCED.exec(text)?.[1] ??
    ENHANCED.exec(around)?.[1] ??
    fromStatus;
  const reply = REPLY_CODE.exec(text)?.[1];
  const statusClass =
    /^\s*([245])/.exec(status ?? '')?.[1] ?? /\b([245])\.\d{1,3}\.\d{1,3}\b/.exec(text)?.[1] ?? reply?.[0];
  // A status about the sender's own address (x.1.7, x.1.8) says more than any words about an address.
  const senderStatus = enhanced === '1.7' || enhanced === '1.8' ? 'sender_rejected' : undefined;
  const byStatus = enhanced ? STATUS[enhanced] : undefined;
  const weakStatus = enhanced !== undefined && WEAK_STATUS.has(enhanced);
  let reason: BounceReason =
    senderStatus ??
    matchWords(text) ??
    (weakStatus ? undefined : byStatus) ??
    matchWords(around) ??
    byStatus ??
    REPLY[reply ?? ''] ??
    'undetermined';
  // A null MX answer (RFC 7505) is 556 5.1.10; Microsoft uses 550 5.1.10 for an unknown recipient.
  if (enhanced === '1.10' && reply === '556') reason = 'not_accept';
  // "User unknown" with neither an address status (x.1.x) nor the RCPT TO it answered: the address was
  // taken and the message refused later, or nobody says when; a filter's answer, not proof.
  const both = `${text} ${around}`;
  const command = commandIn(text) ?? commandIn(around);
  if (reason === 'user_unknown' && !enhanced?.startsWith('1.') && !NONEXISTENT.test(both) && command !== 'rcpt')
    reason = 'filtered';
  // A refusal of the sender (MAIL FROM) or of the sending host (HELO) says nothing about the address.
  if (bounceTypeOf(reason) === 'hard' && (command === 'mail' || command === 'helo'))
    reason = command === 'mail' ? 'sender_rejected' : 'blocked';
  // A report that also calls the mailbox full (or the message too large) gets the reading that keeps the address.
  if (bounceTypeOf(reason) === 'hard') {
    const transient = matchWords(around);
    if (transient === 'mailbox_full' || transient === 'message_too_large') reason = transient;
  }
  // A 4.x.x status is the reporter's own word that the failure may pass: never a hard bounce.
  const bounceType = statusClass === '4' && bounceTypeOf(reason) === 'hard' ? 'soft' : bounceTypeOf(reason);
  return { bounceType, bounceReason: reason };
}
