// Reading bounces and complaints mailed back to postcode (parsed by postal-mime first): RFC 3464 delivery
// status notifications (also nested in a forwarded message, or pasted into the text), RFC 5965 feedback
// reports, and the prose notices many servers still write. Each recipient comes with what happened to it
// and, for a bounce, why (src/mail/bounce-classify.ts).
import PostalMime, { type Email } from 'postal-mime';
import { classifyBounce } from './bounce-classify';
import { fromDeliveryStatus, hasStatusFields } from './reports/delivery-status';
import { fromFeedbackReport } from './reports/feedback';
import { addressIn } from './reports/fields';
import { diagnosticIn, isDelayNotice, mentionsIn, noticeOf, wordsNear } from './reports/plain-text';
import type { Report, ReportedRecipient } from './reports/types';

export { fieldBlocks } from './reports/fields';
export type { Report, ReportedRecipient } from './reports/types';

export const PARSE_OPTIONS = { forceRfc822Attachments: true, attachmentEncoding: 'utf8' } as const;

const STATUS_TYPES = ['message/delivery-status', 'message/global-delivery-status', 'message/xdelivery-status'];
const NESTED_REPORT = /content-type:\s*(?:multipart\/report|message\/(?:x?delivery-status|global-delivery-status))/i;
const AUTO_REPLY_SUBJECT =
  /^\s*(?:auto(?:matic)?[ -]?(?:reply|response|answer)|auto:|away\b|out of (?:the )?office|vacation|abwesenheit|absence|r[ée]ponse automatique|自動応答|不在)/i;
/** Words of a notice that mail failed (or is delayed). */
const FAILURE =
  /fail|undeliver|returned (?:mail|to sender)|delivery problem|could not|couldn't|cannot|unable|not (?:yet )?(?:be(?:en)? )?delivered|mail system error|rejected|delayed|bounce|error|メールエラー|配信/i;

/** A server's refusal quoted in a notice (`550 - Requested action not taken: no such user here`). */
const SERVER_REFUSAL =
  /\b[45]\d\d\b[ -]{1,3}.{0,40}(?:not taken|user|mailbox|recipient|address|rejected|denied|unknown)/i;

type Parsed = Pick<Email, 'attachments' | 'text' | 'html' | 'headers' | 'subject'>;

const header = (email: Parsed, name: string) => email.headers.find((h) => h.key === name)?.value ?? '';

const partOf = (email: Parsed, types: string[]) => {
  const found = email.attachments.find((a) => types.includes(a.mimeType.toLowerCase()));
  return typeof found?.content === 'string' ? found.content : null;
};

const messageIdIn = (text: string | null | undefined) =>
  text ? (/^message-id:\s*(<[^>\s]+>)/im.exec(text)?.[1] ?? null) : null;

/**
 * The notice's text: its text part, else its HTML without tags, else the raw body (a message whose parts
 * could not be told apart, its boundary never used).
 */
function textOf(email: Parsed, raw: string): string {
  if (email.text !== undefined) return email.text;
  if (email.html === undefined) return email.attachments.length === 0 ? raw.slice(raw.search(/\r?\n\r?\n|$/)) : '';
  return email.html
    .replace(/<(?:br|p|div|tr|li)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/&nbsp;/g, ' ');
}

/** Addresses of the sending side (the notice's own To, the returned message's From): never a failed recipient. */
function senderAddresses(email: Parsed, returned: string | null): Set<string> {
  const values = [header(email, 'to'), header(email, 'from')];
  for (const name of ['from', 'return-path', 'sender']) {
    const value = new RegExp(`^${name}:(.*)$`, 'im').exec(returned ?? '')?.[1];
    if (value) values.push(value);
  }
  return new Set(values.map((v) => addressIn(v)?.toLowerCase()).filter((a): a is string => !!a));
}

/** Recipients a prose notice names, each classified by the words about it. */
function fromNotice(email: Parsed, lines: string[], senders: Set<string>): ReportedRecipient[] {
  let notice = lines;
  const whole = `${email.subject ?? ''}\n${notice.join('\n')}`;
  const kind = isDelayNotice(whole) ? 'deferred' : 'bounced';
  let mentions = mentionsIn(notice, senders);
  if (mentions.length === 0 && notice.some((line) => line.startsWith('>'))) {
    // A notice forwarded by someone, quoted line by line.
    notice = notice.map((line) => line.replace(/^>[ \t]?/, ''));
    mentions = mentionsIn(notice, senders);
  }
  if (mentions.length === 0) {
    const failed = header(email, 'x-failed-recipients').split(',').map(addressIn);
    mentions = failed.filter((a): a is string => !!a).map((address) => ({ address, line: -1 }));
  }
  const single = mentions.length === 1;
  const recipients = mentions.map((mention): ReportedRecipient => {
    const words = mention.line < 0 ? whole : wordsNear(notice, mention, mentions);
    const diagnostic = diagnosticIn(words) ?? (single ? diagnosticIn(whole) : null) ?? (words.slice(0, 500) || null);
    if (kind === 'deferred') return { address: mention.address, kind, diagnostic };
    const context = single ? `${words}\n${whole}` : words;
    return { address: mention.address, kind, diagnostic, ...classifyBounce(null, diagnostic, context) };
  });
  const failure = FAILURE.test(`${email.subject} ${header(email, 'from')}`) || SERVER_REFUSAL.test(whole);
  if (recipients.length > 0 || !failure) return recipients;
  // A failure notice that names nobody: it can only be about the email's only recipient.
  const diagnostic = diagnosticIn(notice.join('\n'));
  if (kind === 'deferred') return [{ address: null, kind, diagnostic }];
  return [{ address: null, kind, diagnostic, ...classifyBounce(null, diagnostic, whole) }];
}

/** A hard bounce whose server quotes the sender's own address refused the sender, not the recipient. */
function aboutSender(recipient: ReportedRecipient, senders: Set<string>): ReportedRecipient {
  if (recipient.bounceType !== 'hard') return recipient;
  const words = recipient.diagnostic?.toLowerCase() ?? '';
  if (recipient.address && words.includes(recipient.address.toLowerCase())) return recipient;
  const quotes = [...senders].some((address) => words.includes(address));
  return quotes ? { ...recipient, bounceType: 'soft', bounceReason: 'sender_rejected' } : recipient;
}

async function read(email: Parsed, raw: string, depth: number): Promise<Report | null> {
  const returned = partOf(email, ['text/rfc822-headers', 'message/rfc822']);
  const text = textOf(email, raw);
  const messageId = messageIdIn(returned) ?? messageIdIn(text);
  const feedback = partOf(email, ['message/feedback-report']);
  if (feedback !== null) return { recipients: fromFeedbackReport(feedback, returned), messageId };
  const notice = noticeOf(text);
  const senders = senderAddresses(email, returned ?? text);
  const status = partOf(email, STATUS_TYPES) ?? (hasStatusFields(text) ? text : null);
  if (status !== null) {
    const mentions = mentionsIn(notice, senders);
    const whole = `${email.subject ?? ''}\n${notice.join('\n')}`;
    const recipients = fromDeliveryStatus(status, (recipient, count) => {
      const address = recipient.address?.toLowerCase();
      const mention = mentions.find((m) => m.address === address);
      if (mention) return wordsNear(notice, mention, mentions);
      return count === 1 && mentions.length <= 1 ? whole : '';
    }).map((r) => aboutSender(r.address ? r : { ...r, alternates: mentions.map((m) => m.address) }, senders));
    if (recipients.length > 0) return { recipients, messageId };
  }
  if (depth === 0 && returned && NESTED_REPORT.test(returned)) {
    const nested = await read(await PostalMime.parse(returned, PARSE_OPTIONS), returned, 1);
    if (nested && nested.recipients.length > 0) return nested;
  }
  // An auto-reply (RFC 3834) reports nothing, unless its words say the mail failed (many bounces carry
  // Auto-Submitted: auto-replied too).
  if (AUTO_REPLY_SUBJECT.test(email.subject ?? '')) return null;
  if (/^auto-replied/i.test(header(email, 'auto-submitted')) && !FAILURE.test(`${email.subject}\n${notice.join('\n')}`))
    return null;
  const recipients = fromNotice(email, notice, senders).map((r) => aboutSender(r, senders));
  return recipients.length > 0 ? { recipients, messageId } : null;
}

/**
 * What a report mailed to postcode says (`raw`: the message as it came, parsed as `email`); null when it is
 * none of the three (an auto-reply, a stray message).
 * The returned message's headers give its Message-ID, which names the email when the return path's token is
 * not there (a feedback loop's report, a relay that dropped the token).
 */
export function readReport(email: Parsed, raw: Uint8Array | string): Promise<Report | null> {
  return read(email, typeof raw === 'string' ? raw : new TextDecoder().decode(raw), 0);
}
