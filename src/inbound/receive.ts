// Mail to an account's receiving domain, from the Worker's email() handler: the route its address takes decides
// (refused, stored, or stored and sent as `email.received`). What is kept: the raw bytes and each attachment in the
// account's R2 bucket, the parsed fields in its object, in one transaction with the event's deliveries.
import PostalMime, { type Email } from 'postal-mime';
import { config } from '../config';
import type { Bindings } from '../env';
import { newId } from '../ids';
import { IsolateCache } from '../isolate-cache';
import { accountStore } from '../store/account/client';
import { emailIdOfMessageId } from '../store/account/emails';
import type { InboundMessage, StoredAttachment } from '../store/account/inbound-messages';
import { accountOfInboundSlug } from '../store/control/inbound-slugs';
import { bucketsOf } from '../store/placement';
import { queueDeliveries } from '../webhooks/deliver';
import type { InboundEventData, ParsedInbound, WebhookEvent } from '../webhooks/events';
import { accountReceivingAt, ownDomainsOf } from './own-domains';
import { fromNullSender, isAutoReply, isDeliveryReport, parsedOf } from './parse';
import { matchRoute } from './patterns';

export type InboundOutcome = 'no_account' | 'unmatched' | 'rejected' | 'too_large' | 'rate_limited' | 'stored';

/** The slug of an address on a subdomain of INBOUND_DOMAIN, or null when it is not one. */
export function inboundSlugOfDomain(domain: string, parent: string | null): string | null {
  if (!parent || !domain.endsWith(`.${parent}`)) return null;
  const slug = domain.slice(0, -(parent.length + 1));
  return /^[a-z0-9-]{1,63}$/.test(slug) ? slug : null;
}

async function withinRate(env: Bindings, accountId: string, perMinute: number): Promise<boolean> {
  if (perMinute === 0) return true;
  const counter = env.RATE_COUNTER.get(env.RATE_COUNTER.idFromName(`inbound-account:${accountId}`));
  return (await counter.hit(perMinute, 60)).allowed;
}

export const inboundPaths = (id: string) => ({
  url: `/api/v1/inbound/${id}`,
  rawUrl: `/api/v1/inbound/${id}/raw`,
});

/** A message's attachments as the API and the event show them: what each is, and where its bytes are. */
export const attachmentLinks = (m: Pick<InboundMessage, 'id' | 'attachments'>) =>
  m.attachments.map((a, index) => ({
    index,
    filename: a.filename,
    contentType: a.contentType,
    size: a.size,
    url: `/api/v1/inbound/${m.id}/attachments/${index}`,
  }));

function eventOf(
  m: Omit<InboundMessage, 'emailId'>,
  parsed: Omit<ParsedInbound, 'emailId'>,
): Extract<WebhookEvent, { type: 'email.received' }> {
  const data: InboundEventData = {
    ...parsed,
    emailId: null,
    inboundId: m.id,
    to: m.envelopeTo,
    attachments: attachmentLinks(m),
    ...inboundPaths(m.id),
  };
  return { type: 'email.received', data };
}

/** Puts the raw bytes and the attachments in the account's buckets; the attachments as stored. */
async function keepBytes(env: Bindings, accountId: string, id: string, raw: ArrayBuffer, email: Email) {
  const { bodies, attachments } = await bucketsOf(env, accountId);
  const rawKey = `inbound/${accountId}/${id}/raw`;
  await bodies.put(rawKey, raw, { httpMetadata: { contentType: 'message/rfc822' } });
  const stored: StoredAttachment[] = [];
  for (const [index, part] of email.attachments.entries()) {
    const bytes = typeof part.content === 'string' ? new TextEncoder().encode(part.content) : part.content;
    const key = `inbound/${accountId}/${id}/attachments/${index}`;
    await attachments.put(key, bytes, { httpMetadata: { contentType: part.mimeType } });
    stored.push({
      filename: part.filename,
      contentType: part.mimeType,
      size: bytes.byteLength,
      contentId: part.contentId ?? null,
      disposition: part.disposition === 'inline' ? 'inline' : part.disposition === 'attachment' ? 'attachment' : null,
      key,
    });
  }
  return { rawKey, stored };
}

/** The account of each slug as this isolate read it: a slug, once made, never changes owner (unknown ones are not kept). */
const slugOwners = new IsolateCache<string | null>({ ttlMs: 5 * 60_000, keep: (accountId) => accountId !== null });

/**
 * The account a domain receives for: `undefined` when the domain is no receiving one (a return path's, say),
 * null for a subdomain of INBOUND_DOMAIN no account has.
 */
async function receiverOf(env: Bindings, domain: string): Promise<string | null | undefined> {
  const settings = config(env);
  const slug = inboundSlugOfDomain(domain, settings.inbound.domain);
  if (slug !== null) return await slugOwners.get(slug, () => accountOfInboundSlug(env.DB, slug));
  const { returnPathSubdomain, globalReturnPath } = settings.domains;
  // Return paths never receive (their subdomain is refused as a receiving one): bounces skip the lookup.
  if (domain.startsWith(`${returnPathSubdomain}.`) || domain === globalReturnPath) return undefined;
  return (await accountReceivingAt(env, domain)) ?? undefined;
}

/** Null when the address is not on a receiving domain (the handler goes on with bounces and complaints). */
export async function receiveInbound(message: ForwardableEmailMessage, env: Bindings): Promise<InboundOutcome | null> {
  const settings = config(env).inbound;
  const to = message.to.toLowerCase();
  const domain = to.slice(to.lastIndexOf('@') + 1);
  const accountId = await receiverOf(env, domain);
  if (accountId === undefined) return null;
  if (accountId === null) {
    message.setReject('5.1.1 No such mailbox here');
    return 'no_account';
  }
  const store = accountStore(env, accountId);
  const route = matchRoute(await store.inboundRoutesOfDomain(accountId, domain), to);
  if (!route) {
    message.setReject('5.1.1 No such mailbox here');
    return 'unmatched';
  }
  if (route.action === 'reject') {
    message.setReject(`5.7.1 ${route.rejectReason}`);
    return 'rejected';
  }
  if (message.rawSize > settings.maxBytes) {
    message.setReject(
      `5.3.4 Message too big: ${message.rawSize} bytes; this address takes at most ${settings.maxBytes}`,
    );
    return 'too_large';
  }
  if (!(await withinRate(env, accountId, settings.perAccountPerMinute))) {
    message.setReject('4.7.0 Too much mail for this account just now: try again later');
    return 'rate_limited';
  }
  const raw = await new Response(message.raw).arrayBuffer();
  const email = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer' });
  const id = newId('inm');
  const { rawKey, stored } = await keepBytes(env, accountId, id, raw, email);
  const parsed = parsedOf(email);
  const { from, authentication, inReplyTo, references } = parsed;
  const fromDomain = from?.address.slice(from.address.lastIndexOf('@') + 1) ?? '';
  const spoofed = authentication.dmarc === 'fail' && (await ownDomainsOf(env, accountId)).includes(fromDomain);
  const autoReply = isAutoReply(email);
  const deliveryReport = isDeliveryReport(email, fromNullSender(message.from, email), autoReply);
  const record: Omit<InboundMessage, 'emailId'> = {
    ...parsed,
    id,
    accountId,
    routeId: route.id,
    action: route.action,
    envelopeFrom: message.from.toLowerCase(),
    envelopeTo: to,
    headers: email.headers.map((h) => ({ key: h.key, value: h.value })),
    attachments: stored,
    autoReply,
    deliveryReport,
    spoofed,
    size: raw.byteLength,
    rawKey,
    receivedAt: Date.now(),
  };
  const candidates = [...new Set([inReplyTo, ...references.toReversed()])]
    .map(emailIdOfMessageId)
    .filter((emailId) => emailId !== null);
  const event = route.action === 'webhook' && !autoReply && !deliveryReport ? eventOf(record, parsed) : null;
  const { deliveryIds } = await store.recordInbound(record, candidates, event);
  await queueDeliveries(env, accountId, deliveryIds);
  return 'stored';
}
