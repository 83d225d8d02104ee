// RFC 3464 status parts (message/delivery-status and its global and vendor variants, or the same fields
// written into a text part), read as servers write them rather than as the RFC says they should.
import { classifyBounce } from '../bounce-classify';
import { addressIn, recipientGroups, typed } from './fields';
import type { ReportedRecipient, ReportKind } from './types';

const KINDS: Record<string, ReportKind> = {
  failed: 'bounced',
  failure: 'bounced',
  expired: 'bounced',
  delayed: 'deferred',
  delivered: 'delivered',
  relayed: 'delivered',
  expanded: 'delivered',
};

/** Whether a text carries status fields for recipients (a status part pasted into the text). */
export const hasStatusFields = (text: string) =>
  /^(?:final|original)-recipient\s*:/im.test(text) && /^(?:action|status)\s*:/im.test(text);

/**
 * The recipients a status part reports (address null where its recipient field holds none); `contextOf`
 * gives the notice's words about one of them, read when its Diagnostic-Code names no cause.
 */
export function fromDeliveryStatus(
  content: string,
  contextOf: (recipient: ReportedRecipient, count: number) => string = () => '',
): ReportedRecipient[] {
  const recipients: ReportedRecipient[] = [];
  const groups = recipientGroups(content);
  for (const fields of groups) {
    const original = addressIn(typed(fields.get('original-recipient')));
    const final = addressIn(typed(fields.get('final-recipient'))) ?? addressIn(typed(fields.get('x-actual-recipient')));
    const status = fields.get('status')?.trim() || null;
    const action = fields.get('action')?.toLowerCase().split(/[\s(]/)[0] ?? '';
    const statusClass = /^([245])\./.exec(status ?? '')?.[1];
    const kind: ReportKind | undefined =
      KINDS[action] ?? (statusClass === '5' || statusClass === '4' ? 'bounced' : undefined);
    if (!kind) continue;
    const diagnostic = typed(fields.get('diagnostic-code')) || null;
    const address = original ?? final;
    const recipient: ReportedRecipient = { address, kind, diagnostic };
    if (original && final && original.toLowerCase() !== final.toLowerCase()) recipient.alternates = [final];
    if (kind === 'bounced') {
      const found = classifyBounce(status, diagnostic, contextOf(recipient, groups.length));
      if (found.bounceReason === 'undetermined' && action === 'expired') {
        recipients.push({ ...recipient, bounceType: 'soft', bounceReason: 'expired' });
        continue;
      }
      Object.assign(recipient, found);
    }
    recipients.push(recipient);
  }
  return recipients;
}
