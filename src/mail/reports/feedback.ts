// RFC 5965 feedback reports (ARF): a recipient pressed "this is spam" or asked to be taken off the list.
import { addressIn, fieldBlocks } from './fields';
import type { ReportedRecipient } from './types';

/** Feedback types that are the recipient's complaint (auth-failure, not-spam and virus reports are not). */
const COMPLAINTS = new Set(['abuse', 'fraud', 'opt-out']);

/** All fields named `name` in a block of header-like lines (Original-Rcpt-To may repeat). */
function allOf(text: string, name: string): string[] {
  const pattern = new RegExp(`^${name}[ \\t]*:(.*)$`, 'gim');
  return [...text.matchAll(pattern)].map((m) => m[1]!.trim());
}

/**
 * A complaint about every recipient the report names (each Original-Rcpt-To), else the returned message's
 * To; with none (the provider redacted it), a complaint about the email's only recipient.
 */
export function fromFeedbackReport(content: string, returned: string | null): ReportedRecipient[] {
  const type = fieldBlocks(content)[0]?.get('feedback-type')?.toLowerCase() ?? '';
  if (!COMPLAINTS.has(type)) return [];
  const named = allOf(content, 'original-rcpt-to')
    .map(addressIn)
    .filter((a): a is string => a !== null);
  const returnedTo = returned ? addressIn(fieldBlocks(returned)[0]?.get('to')) : null;
  const addresses = [...new Set(named.length > 0 ? named : returnedTo ? [returnedTo] : [])];
  if (addresses.length === 0) return [{ address: null, kind: 'complained', diagnostic: null }];
  return addresses.map((address) => ({ address, kind: 'complained', diagnostic: null }));
}
