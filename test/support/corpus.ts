// The vendored corpus of real bounces (test/corpus/sisimai): what the reference parser expects of each
// sample, how a recipient's outcome in postcode compares with it, and the agreement printed by MTA and class.
import expectedJson from '../corpus/sisimai/expected.json';

export type ExpectedRecipient = {
  address: string;
  status: string;
  replyCode: string;
  /** sisimai's reason (userunknown, mailboxfull, feedback, vacation, delivered, ...). */
  reason: string;
  hardBounce: boolean;
  feedbackType?: string;
};
export type Sample = { recipientsFrom: 'sisimai-perl' | 'hand'; recipients: ExpectedRecipient[] };

export const SAMPLES = expectedJson as Record<string, Sample>;

/** What happened to one recipient, in the terms both parsers share. */
export type OutcomeClass = 'hard' | 'soft' | 'complaint' | 'none';

/** The reference parser's reasons for a failure about the message, the sender or the moment, never the address. */
export const TRANSIENT_REASONS = new Set([
  'mailboxfull',
  'mesgtoobig',
  'exceedlimit',
  'emailtoolarge',
  'expired',
  'blocked',
  'badreputation',
  'requireptr',
  'spamdetected',
  'virusdetected',
  'policyviolation',
  'contenterror',
  'authfailure',
  'securityerror',
  'failedstarttls',
  'toomanyconn',
  'speeding',
  'networkerror',
  'systemerror',
  'systemfull',
  'norelaying',
  'rejected',
  'notcompliantrfc',
  'syntaxerror',
]);

/** The class the reference parser gives a recipient: a complaint, not a bounce at all, hard or soft. */
export function expectedClass(recipient: ExpectedRecipient): OutcomeClass {
  if (recipient.reason === 'feedback') return 'complaint';
  if (recipient.reason === 'delivered' || recipient.reason === 'vacation') return 'none';
  return recipient.hardBounce ? 'hard' : 'soft';
}

/** The MTA (or remote host) a sample is filed under: `lhost-postfix-13.eml` → `lhost-postfix`. */
export const mtaOf = (file: string) => file.replace(/-\d+\.eml$/, '');

const ADDRESS = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g;

/** An address compared without case or the quotes of a quoted local part. */
export const bare = (address: string) => address.replace(/"/g, '').toLowerCase();

/**
 * The address postcode sent to for a recipient the reference parser names by its Final-Recipient: the
 * Original-Recipient of the same status block when it names another (the mailbox forwarded or aliased it).
 */
export function sentToOf(raw: string, address: string): string {
  const lines = raw.split(/\r?\n/);
  const at = lines.findIndex((l) => /^final-recipient:/i.test(l) && bare(l).includes(bare(address)));
  if (at < 0) return address;
  for (const line of lines.slice(Math.max(0, at - 4), at + 5)) {
    if (line.trim() === '' && lines.indexOf(line) > at) break;
    const original = /^original-recipient:\s*(?:[\w-]+;)?\s*<?([^\s<>]+@[^\s<>]+?)>?\s*$/i.exec(line)?.[1];
    if (original) return bare(original) === bare(address) ? address : original;
  }
  return address;
}

/**
 * Addresses a sample mentions that the reference parser does not name as failed (the returned message's
 * To and Cc, the sender, postmasters): sent the same email, none of them may change.
 */
export function bystandersOf(raw: string, named: string[], limit = 8): string[] {
  // An address a status part names as a recipient is no bystander, whatever the prose says.
  const statusNamed = [...raw.matchAll(/^(?:final|original)-recipient:.*$/gim)].flatMap(
    (m) => m[0].match(ADDRESS) ?? [],
  );
  const seen = new Set([...named, ...statusNamed].map(bare));
  const found: string[] = [];
  for (const [match] of raw.matchAll(ADDRESS)) {
    const address = match.replace(/^[.]+|[.]+$/g, '');
    const key = bare(address);
    if (seen.has(key) || !/\.[A-Za-z]{2,}$/.test(address)) continue;
    seen.add(key);
    found.push(address);
    if (found.length === limit) break;
  }
  return found;
}

export type SampleResult = {
  file: string;
  expected: OutcomeClass[];
  observed: OutcomeClass[];
  /** Expected recipients not hard-bounced by the reference parser that postcode suppressed anyway. */
  transientSuppressed: string[];
  /** Addresses the report does not name as failed that postcode changed. */
  bystandersChanged: string[];
};

export const agrees = (r: SampleResult) =>
  r.bystandersChanged.length === 0 && r.expected.every((each, i) => each === r.observed[i]);

/** Agreement by MTA and by expected class, as printed lines. */
export function agreementReport(results: SampleResult[]): string {
  const rows = (key: (r: SampleResult) => string[]) => {
    const table = new Map<string, { agree: number; total: number }>();
    for (const r of results)
      for (const k of new Set(key(r))) {
        const row = table.get(k) ?? { agree: 0, total: 0 };
        row.total += 1;
        if (agrees(r)) row.agree += 1;
        table.set(k, row);
      }
    return [...table]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, { agree, total }]) => `  ${k.padEnd(26)} ${String(agree).padStart(3)} / ${String(total).padEnd(3)}`);
  };
  const agreed = results.filter(agrees).length;
  const percent = ((100 * agreed) / results.length).toFixed(1);
  return [
    `Real-world bounces (sisimai set-of-emails): ${agreed} of ${results.length} samples agree (${percent} %)`,
    'By expected class (a sample counts under each class it expects):',
    ...rows((r) => r.expected),
    'By MTA:',
    ...rows((r) => [mtaOf(r.file)]),
    'Disagreements (expected → observed):',
    ...results.filter((r) => !agrees(r)).map((r) => `  ${r.file}: ${r.expected.join(',')} → ${r.observed.join(',')}`),
  ].join('\n');
}

/** `work` over every item, a few at a time: each waits mostly on storage and SMTP, not on the CPU. */
export async function inLanes<T, R>(items: T[], work: (item: T, index: number) => Promise<R>, lanes = 8): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i]!, i);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return results;
}
