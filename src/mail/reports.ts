// Reading bounces and complaints mailed back to postcode (parsed by postal-mime first): RFC 3464 delivery
// status notifications, RFC 5965 feedback reports, and the plain-text bounces some servers still send
// (Exim, qmail, Yahoo, Gmail's text part), as recipients and what happened to each.
import type { Email } from 'postal-mime';
import type { BounceType } from './delivery-events';

export type ReportedRecipient = {
  address: string;
  kind: 'bounced' | 'deferred' | 'delivered' | 'complained';
  bounceType?: BounceType;
  diagnostic: string | null;
};

/** What a report says, and the Message-ID of the message it returns (when its headers came back). */
export type Report = { recipients: ReportedRecipient[]; messageId: string | null };

const ADDRESS = /[^\s<>()[\]"',;:]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,}/;
/** "wasn't delivered to a@b", "could not be delivered to <a@b>" (Gmail's and others' prose). */
const DELIVERED_TO = new RegExp(`(?:delivered|delivery) to\\s+<?(${ADDRESS.source})`, 'i');

/** Header-like fields (RFC 822 style, folded lines joined) of each blank-line separated block. */
export function fieldBlocks(text: string): Map<string, string>[] {
  return text
    .replace(/\r\n/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((block) => {
      const fields = new Map<string, string>();
      let last: string | null = null;
      for (const line of block.split('\n')) {
        if (/^[ \t]/.test(line) && last) fields.set(last, `${fields.get(last)} ${line.trim()}`);
        else {
          const colon = line.indexOf(':');
          if (colon <= 0) continue;
          last = line.slice(0, colon).trim().toLowerCase();
          if (!fields.has(last)) fields.set(last, line.slice(colon + 1).trim());
        }
      }
      return fields;
    })
    .filter((fields) => fields.size > 0);
}

/** `rfc822; a@b` → `a@b`; `smtp; 550 …` → `550 …`. */
const typed = (value: string | undefined) => (value === undefined ? undefined : value.replace(/^[\w-]+\s*;\s*/, ''));

const addressIn = (value: string | undefined) => (value ? (ADDRESS.exec(value)?.[0] ?? null) : null);

/** 5.x.x or 5xx: hard; 4.x.x or 4xx: soft; neither: hard (the server gave up on it). */
function bounceTypeOf(status: string | undefined, diagnostic: string | null): BounceType {
  const code = /\b([245])\.\d{1,3}\.\d{1,3}\b/.exec(status ?? '')?.[1] ?? /\b([245])\d\d\b/.exec(diagnostic ?? '')?.[1];
  return code === '4' ? 'soft' : 'hard';
}

function fromDeliveryStatus(content: string): ReportedRecipient[] {
  const recipients: ReportedRecipient[] = [];
  for (const fields of fieldBlocks(content).slice(1)) {
    const address =
      addressIn(typed(fields.get('final-recipient'))) ?? addressIn(typed(fields.get('original-recipient')));
    const action = fields.get('action')?.toLowerCase().split(/\s/)[0];
    if (!address || !action) continue;
    const diagnostic = typed(fields.get('diagnostic-code')) ?? null;
    const status = fields.get('status');
    if (action === 'failed') {
      recipients.push({ address, kind: 'bounced', bounceType: bounceTypeOf(status, diagnostic), diagnostic });
    } else if (action === 'delayed') recipients.push({ address, kind: 'deferred', diagnostic });
    else if (action === 'delivered' || action === 'relayed' || action === 'expanded') {
      recipients.push({ address, kind: 'delivered', diagnostic });
    }
  }
  return recipients;
}

/** A complaint (Feedback-Type abuse) about the recipient it names, or the returned message's To. */
function fromFeedbackReport(content: string, returned: string | null): ReportedRecipient[] {
  const fields = fieldBlocks(content)[0];
  if (fields?.get('feedback-type')?.toLowerCase() !== 'abuse') return [];
  const returnedTo = returned ? fieldBlocks(returned)[0]?.get('to') : undefined;
  const address = addressIn(fields.get('original-rcpt-to')) ?? addressIn(returnedTo);
  return address ? [{ address, kind: 'complained', diagnostic: null }] : [];
}

/** The recipients a plain-text bounce names, each with the words near it that carry its reply code. */
function fromPlainText(text: string): ReportedRecipient[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const delayed = /\b(delayed|will (?:continue|keep) trying|still being retried|not yet been delivered)\b/i.test(text);
  const found = new Map<string, number>();
  const note = (address: string | null, index: number) => {
    if (address && !found.has(address.toLowerCase())) found.set(address.toLowerCase(), index);
  };
  let failedList = false;
  for (const [index, line] of lines.entries()) {
    // Postfix, qmail, Yahoo: `<address>:` starting a line.
    const angled = /^\s*<([^<>\s]+@[^<>\s]+)>:?/.exec(line);
    if (angled) note(angled[1]!, index);
    // Exim: the failed addresses, indented, after "address(es) failed:".
    if (/address(?:\(es\)|es)? failed:/i.test(line)) failedList = true;
    else if (failedList && /^\s{2,}\S+@\S+\s*$/.test(line)) note(addressIn(line), index);
    // Gmail and others: "wasn't delivered to a@b", "could not be delivered to a@b".
    const prose = DELIVERED_TO.exec(line);
    if (prose) note(prose[1]!, index);
  }
  return [...found].map(([address, index]) => {
    const near = lines.slice(index, index + 4).join(' ');
    const diagnostic = /\b[45]\d\d\b[^\n]*/.exec(near)?.[0]?.trim() ?? null;
    if (delayed) return { address, kind: 'deferred', diagnostic };
    return { address, kind: 'bounced', bounceType: bounceTypeOf(near, diagnostic), diagnostic };
  });
}

const messageIdIn = (text: string | undefined) =>
  text ? (/^message-id:\s*(<[^>\s]+>)/im.exec(text)?.[1] ?? null) : null;

/**
 * What a report mailed to postcode says; null when it is none of the three (an auto-reply, a stray message).
 * The returned message's headers (text/rfc822-headers or message/rfc822, else quoted in the text) give its
 * Message-ID, which names the email when the return path's token is not there (a feedback loop's report).
 */
export function readReport(email: Pick<Email, 'attachments' | 'text'>): Report | null {
  const part = (type: string) => {
    const found = email.attachments.find((a) => a.mimeType.toLowerCase() === type);
    return typeof found?.content === 'string' ? found.content : null;
  };
  const returned = part('text/rfc822-headers') ?? part('message/rfc822');
  const messageId = messageIdIn(returned ?? undefined) ?? messageIdIn(email.text);
  const status = part('message/delivery-status') ?? part('message/global-delivery-status');
  if (status !== null) return { recipients: fromDeliveryStatus(status), messageId };
  const feedback = part('message/feedback-report');
  if (feedback !== null) return { recipients: fromFeedbackReport(feedback, returned), messageId };
  const recipients = email.text ? fromPlainText(email.text) : [];
  return recipients.length > 0 ? { recipients, messageId } : null;
}
