// Bounces written as prose (Exim, qmail, Gmail's and Exchange's older notices, Domino, Zoho, GMX,
// OpenSMTPD and many more): the notice is read only up to where the returned message begins, and an address
// counts as failed only where the notice lists it (alone or first on its line, or after "delivered to"), never
// from the returned message's own headers.
import { ADDRESS_SOURCE } from './fields';

/** Lines that begin the returned message, or its headers, inside a text bounce. */
const RETURNED_BEGINS = [
  /^[\s>|-]*(?:-+ ?)?(?:the )?(?:original|unsent|undelivered|returned|rejected|bounced) (?:message|mail)(?: headers?)?\s*(?:follows?\b.*|below\b.*|:.*|-+\s*|\(.*)?$/i,
  /^[\s-]*(?:below (?:this line )?is a copy|this is a copy of|here is a copy|a copy of the (?:original )?message)/i,
  /^[\s-]*(?:message|original) headers? follows?/i,
  /^[\s-]*(?:the )?(?:headers|text) of the (?:original )?message/i,
  /^\s*-{3,} ?(?:original|returned|undelivered|unsent|message|headers)/i,
  /^(?:Received|Return-Path|DKIM-Signature|X-Received|Message-I[dD]|MIME-Version|Authentication-Results|ARC-Seal|X-Google-DKIM-Signature|X-Originating-IP)\s*:/i,
  /^Content-Type:\s*(?:message|text\/rfc822-headers)/i,
];

/** The notice itself: the text before the returned message. */
export function noticeOf(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const end = lines.findIndex((line, i) => i > 0 && RETURNED_BEGINS.some((pattern) => pattern.test(line)));
  return end < 0 ? lines : lines.slice(0, end);
}

/** An address that opens a line: `a@b`, `<a@b>:`, `"a@b":`, `* a@b`, `a@b<mailto:a@b>`, `a@b on <date>`. */
const LEADING = new RegExp(
  `^\\s*(?:[*•>-]\\s*)?(?:[245]\\d\\d[ -])?(?:RCPT TO:\\s*)?[<'"]?(${ADDRESS_SOURCE})[>'"]?(?=$|[\\s:.,;(<\\[])`,
  'i',
);
/** `a@b <c@d>: …`: the second address is the one the line is about (Exim's "malformed address"). */
const SECOND = new RegExp(`^\\s*\\S+@\\S+\\s+<(${ADDRESS_SOURCE})>:`, 'i');
/** Prose that names the failed address. */
const NAMED = [
  new RegExp(
    `(?:deliver(?:ed|y|ing)?(?: (?:your|the|this))?(?: (?:e-?mail|mail|message))?|sent|send (?:it|mail)) to:?\\s*<?(${ADDRESS_SOURCE})`,
    'i',
  ),
  new RegExp(
    `(?:failed|invalid|unknown|rejected|bad|undeliverable) recipients?(?: address(?:es)?)?:?\\s*<?(${ADDRESS_SOURCE})`,
    'i',
  ),
  new RegExp(
    `\\b(?:Address|Recipient(?: address)?|Original-Rcpt-To|User|userid|Destinataire):\\s*<?(${ADDRESS_SOURCE})`,
    'i',
  ),
  new RegExp(`\\bRCPT TO:?\\s*<(${ADDRESS_SOURCE})>`, 'i'),
];
/** A line that tells the sender where to write: the address after it is no recipient. */
const INSTRUCTION = /(?:to the address|send (?:e-?mail|mail|a message) to|contact|write to)\s*:?\s*$/i;
/** A header field of a quoted message (its folded lines carry addresses that did not fail). */
const QUOTED_FIELD = /^\s*(?:To|Cc|Bcc|From|Reply-To|Sender|Subject|Date)\s*:/i;

export type NoticeMention = { address: string; line: number };

/** Addresses the notice lists as failed, each with the line it stands on; `exclude`: the sender's own. */
export function mentionsIn(notice: string[], exclude: ReadonlySet<string>): NoticeMention[] {
  const found = new Map<string, number>();
  const note = (address: string | undefined, line: number) => {
    const key = address
      ?.replace(/^mailto:/i, '')
      .replace(/\.$/, '')
      .toLowerCase();
    if (key && !exclude.has(key) && !found.has(key)) found.set(key, line);
  };
  let inQuotedField = false;
  let previous = '';
  for (const [index, line] of notice.entries()) {
    const instruction = INSTRUCTION.test(previous);
    if (line.trim() !== '') previous = line;
    if (instruction) continue;
    if (QUOTED_FIELD.test(line)) {
      inQuotedField = true;
      continue;
    }
    if (inQuotedField && /^[ \t]/.test(line) && line.trim() !== '') continue;
    inQuotedField = false;
    note(SECOND.exec(line)?.[1] ?? LEADING.exec(line)?.[1], index);
    for (const pattern of NAMED) note(pattern.exec(line)?.[1], index);
  }
  return [...found].map(([address, line]) => ({ address, line }));
}

const SECTION = /^\s*(?:while talking to|[245]\d\d \S+ \(\w+\)\.\.\.)/i;

/** The words about one mention: its line and those after it, up to the next mention or a blank line. */
export function wordsNear(notice: string[], mention: NoticeMention, mentions: NoticeMention[]): string {
  const next = mentions.map((m) => m.line).filter((line) => line > mention.line);
  // Sendmail's transcript: a host's own line, or a new conversation, begins the next recipient's words.
  const section = notice.findIndex((line, i) => i > mention.line && SECTION.test(line));
  const end = Math.min(mention.line + 8, ...next, ...(section < 0 ? [] : [section]));
  const lines = notice.slice(mention.line, end);
  const blank = lines.findIndex((line, i) => i > 1 && line.trim() === '');
  return (blank < 0 ? lines : lines.slice(0, blank)).map((line) => line.trim()).join('\n');
}

const DELAYED =
  /\bdelayed\b|\(delay\)|will (?:continue|keep) (?:trying|to try)|will be retried|will retry|still (?:being )?(?:retried|trying)|(?:has|have) not yet been delivered|not been delivered yet|warning: (?:message|could not)|delivery (?:is )?delayed/i;
const GAVE_UP =
  /permanent|gave up|giving up|retry (?:time(?:out)?|period) (?:exceeded|expired)|could not be delivered for/i;

/** Whether the notice reports a delay (mail still being retried) rather than a failure. */
export const isDelayNotice = (text: string) => DELAYED.test(text) && !GAVE_UP.test(text);

/** The server's reply in a passage: from the line with its reply or status code to the next blank line. */
export function diagnosticIn(words: string): string | null {
  const lines = words.split('\n');
  const at = lines.findIndex((line) => REPLY_LINE.test(line));
  if (at < 0) return null;
  const end = lines.findIndex((line, i) => i > at && line.trim() === '');
  const first = REPLY_LINE.exec(lines[at]!)![1]!;
  const reply = [first, ...lines.slice(at + 1, end < 0 ? undefined : end)].map((line) => line.trim()).join(' ');
  return reply.slice(0, 500);
}

const REPLY_LINE = /(?:^|[ \t(:'"])((?:[245]\d\d(?:[ \t-]|:\s)|[245]\.\d{1,3}\.\d{1,3}\b).*)$/;
