// Cloudflare Email Service's lifecycle events (an event subscription of the sending domain publishes them to
// the `postcode-email-events` queue), read as postcode's delivery events. Each names the message id the
// binding answered and one recipient. The payload's fields are those Cloudflare's "Event subscriptions" page
// documents for Email Sending (docs/delivery.md); anything else on the queue is no such event.
import { classifyBounce } from './bounce-classify';
import type { DeliveryEvent, DeliveryEventKind } from './delivery-events';

type Payload = {
  messageId?: unknown;
  recipient?: unknown;
  delivery?: { smtpResponse?: unknown };
  bounce?: { type?: unknown; reason?: unknown };
  failure?: { reason?: unknown };
  rejection?: { reason?: unknown; detail?: unknown };
  complaint?: { type?: unknown };
};

const PREFIX = 'cf.email.sending.message.';

const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value.slice(0, 1000) : null);

/** The delivery event of one queue message's body, or null when it is not an Email Sending event. */
export function deliveryEventOfCloudflare(body: unknown, route: string): DeliveryEvent | null {
  const { type, payload } = (body ?? {}) as { type?: unknown; payload?: Payload };
  if (typeof type !== 'string' || !type.startsWith(PREFIX) || !payload) return null;
  const messageId = text(payload.messageId);
  const recipient = text(payload.recipient);
  if (!messageId || !recipient) return null;
  const smtp = text(payload.delivery?.smtpResponse);
  const base = { target: { providerId: messageId }, recipient, route };
  const of = (kind: DeliveryEventKind, diagnostic: string | null, more: Partial<DeliveryEvent> = {}) => ({
    ...base,
    kind,
    diagnostic,
    ...more,
  });
  switch (type.slice(PREFIX.length)) {
    case 'delivered':
      return of('delivered', smtp);
    case 'deferred':
      return of('deferred', text(payload.bounce?.reason) ?? smtp);
    case 'bounced': {
      // The reason from the server's words; the provider's hard or soft only where those words say nothing, so
      // a full mailbox the provider calls hard still keeps the address.
      const diagnostic = text(payload.bounce?.reason) ?? smtp;
      const found = classifyBounce(null, diagnostic);
      const stated = payload.bounce?.type === 'soft' ? 'soft' : 'hard';
      const bounceType = found.bounceReason === 'undetermined' ? stated : found.bounceType;
      return of('bounced', diagnostic, { bounceType, bounceReason: found.bounceReason });
    }
    case 'failed':
      return of('failed', text(payload.failure?.reason));
    case 'rejected': {
      const words = text(payload.rejection?.detail) ?? text(payload.rejection?.reason);
      return of(payload.rejection?.reason === 'suppressed' ? 'suppressed' : 'failed', words);
    }
    case 'complained':
      return of('complained', text(payload.complaint?.type));
    default:
      return null;
  }
}
