// The Worker's email() handler: mail routed to the return path domains (Cloudflare Email Routing; locally
// `wrangler dev`'s POST /cdn-cgi/handler/email). Bounces come to `bounces+<key>-<mac>@…` (or to a bare
// `bounces@…` when a relay or forwarder dropped the token), complaints to the feedback-loop address
// (FEEDBACK_ADDRESS); anything else, or mail for a domain that is no return path, is refused. A token whose MAC
// does not verify changes nothing (someone guessed at the address): it is logged and the mail dropped. Without a
// token, the returned message's Message-ID names the email.
import PostalMime from 'postal-mime';
import { config, type DomainsConfig, dkimKeySecret } from '../config';
import type { Bindings } from '../env';
import { accountStore } from '../store/account/client';
import { emailIdOfMessageId, recipientsOf } from '../store/account/emails';
import { accountOfEmailId } from '../store/directory';
import { canonicalAddress, parseMailbox } from './address';
import type { DeliveryEvent } from './delivery-events';
import { applyOrRequeue } from './feedback';
import { PARSE_OPTIONS, type ReportedRecipient, readReport } from './reports';
import { messageKeyOf } from './return-path';

/** Reports carry the returned message, attachments and all: the report itself is in the first part. */
const MAX_REPORT_BYTES = 512 * 1024;

/** The first `limit` bytes of a message (the rest is cancelled). */
async function head(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < limit) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const piece = chunk.subarray(0, bytes.length - offset);
    bytes.set(piece, offset);
    offset += piece.length;
  }
  return bytes;
}

/** A return path domain: the service's (RETURN_PATH_DOMAIN), or a verified domain's return path subdomain. */
const isReturnPathDomain = (domain: string, settings: DomainsConfig) =>
  domain === settings.globalReturnPath || domain.startsWith(`${settings.returnPathSubdomain}.`);

export type InboundOutcome = 'rejected' | 'forged' | 'code_mail' | 'not_a_report' | 'unmatched' | 'applied';

/** What became of one inbound message (the handler's result; logged). */
export async function receiveMail(message: ForwardableEmailMessage, env: Bindings): Promise<InboundOutcome> {
  const to = message.to.toLowerCase();
  const at = to.lastIndexOf('@');
  const local = to.slice(0, at);
  const isBounce = local.startsWith('bounces+');
  const { domains, feedback } = config(env);
  const tokenless = local === 'bounces' || local === feedback.feedbackLocalPart;
  if ((!isBounce && !tokenless) || !isReturnPathDomain(to.slice(at + 1), domains)) {
    message.setReject('5.1.1 No such mailbox here: this domain receives bounces and feedback reports only');
    return 'rejected';
  }
  let emailId: string | null = null;
  if (isBounce) {
    const key = await messageKeyOf(dkimKeySecret(env), to);
    if (key === null) {
      console.warn('inbound mail: a return path token that does not verify, ignored', to);
      return 'forged';
    }
    // A code mail has no recipient state to change: its session expires on its own.
    if (key.startsWith('otp_')) return 'code_mail';
    emailId = key;
  }
  const raw = await head(message.raw, MAX_REPORT_BYTES);
  const report = await readReport(await PostalMime.parse(raw, PARSE_OPTIONS), raw);
  if (!report || report.recipients.length === 0) return 'not_a_report';
  emailId ??= emailIdOfMessageId(report.messageId);
  if (emailId === null) return 'unmatched';
  const accountId = await accountOfEmailId(env, emailId);
  if (accountId === null) return 'unmatched';
  const store = accountStore(env, accountId);
  const email = await store.findEmail(emailId);
  if (!email) return 'unmatched';
  const sentTo = recipientsOf(email).map((r) => r.address);
  for (const recipient of report.recipients) {
    const address = recipientOf(recipient, sentTo);
    if (address === null) {
      // A complaint about nobody this email went to (the provider hid who): noted, no address guessed.
      if (recipient.kind === 'complained') {
        const detail = 'a complaint that names none of its recipients (the provider hid who)';
        await store.recordEmailEvents(emailId, [{ type: 'complained', detail }], Date.now());
      }
      continue;
    }
    const event: DeliveryEvent = {
      target: { emailId },
      recipient: address,
      kind: recipient.kind,
      bounceType: recipient.bounceType,
      bounceReason: recipient.bounceReason,
      diagnostic: recipient.diagnostic,
      route: null,
    };
    await applyOrRequeue(env, event);
  }
  return 'applied';
}

const canonical = (address: string) => {
  const mailbox = parseMailbox(address.replace(/^mailto:/i, ''));
  return mailbox ? canonicalAddress(mailbox.email) : null;
};

/**
 * The address of the email a reported recipient is: the one the report names (or gives beside it, as a
 * forward's Final-Recipient); with none of them, the email's only recipient when the report names nobody
 * (a redacted complaint, a notice that names no address) or is a complaint; else none.
 */
function recipientOf(recipient: ReportedRecipient, sentTo: string[]): string | null {
  const ours = new Map(sentTo.map((address) => [canonical(address), address]));
  for (const candidate of [recipient.address, ...(recipient.alternates ?? [])]) {
    const key = candidate ? canonical(candidate) : null;
    const found = key ? ours.get(key) : undefined;
    if (found) return found;
  }
  const unnamed = recipient.address === null || recipient.kind === 'complained';
  return unnamed && sentTo.length === 1 ? sentTo[0]! : null;
}
