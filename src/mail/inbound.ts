// The Worker's email() handler: mail routed to the return path domains (Cloudflare Email Routing; locally
// `wrangler dev`'s POST /cdn-cgi/handler/email). Bounces come to `bounces+<key>-<mac>@…`, complaints to the
// feedback-loop address (FEEDBACK_ADDRESS); anything else, or mail for a domain that is no return path, is
// refused. A token whose MAC does not verify changes nothing (someone guessed at the address): it is logged and
// the mail dropped.
import PostalMime from 'postal-mime';
import { config, type DomainsConfig, dkimKeySecret } from '../config';
import type { Bindings } from '../env';
import type { DeliveryEvent } from './delivery-events';
import { applyOrRequeue } from './feedback';
import { readReport } from './reports';
import { messageKeyOf } from './return-path';

/** Reports carry the returned message, attachments and all: the report itself is in the first part. */
const MAX_REPORT_BYTES = 512 * 1024;
const EMAIL_ID = /^<(em_[a-z2-7]{20})@[^>]+>$/;

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
  if ((!isBounce && local !== feedback.feedbackLocalPart) || !isReturnPathDomain(to.slice(at + 1), domains)) {
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
  const parsed = await PostalMime.parse(await head(message.raw, MAX_REPORT_BYTES), {
    forceRfc822Attachments: true,
    attachmentEncoding: 'utf8',
  });
  const report = readReport(parsed);
  if (!report || report.recipients.length === 0) return 'not_a_report';
  emailId ??= EMAIL_ID.exec(report.messageId ?? '')?.[1] ?? null;
  if (emailId === null) return 'unmatched';
  for (const recipient of report.recipients) {
    const event: DeliveryEvent = {
      target: { emailId },
      recipient: recipient.address,
      kind: recipient.kind,
      bounceType: recipient.bounceType,
      diagnostic: recipient.diagnostic,
      route: null,
    };
    await applyOrRequeue(env, event);
  }
  return 'applied';
}
