// The `postcode-email-events` queue: Cloudflare Email Service's lifecycle events, and reports the email()
// handler read before the send they name was recorded. Each is applied on its own; one about a send not
// recorded yet is retried (a provider's event can overtake the binding's answer being stored), and after the
// queue's retries it is dropped, logged (an event of mail postcode never sent looks the same).
import { config } from '../config';
import type { Bindings } from '../env';
import { applyDeliveryEvent, type QueuedDeliveryEvent, REPORT_RETRY_SECONDS } from '../mail/feedback';
import { deliveryEventOfCloudflare } from '../mail/provider-events';

/** The name events of Cloudflare Email Service are recorded under: the `cloudflare` route's. */
const cloudflareRouteName = (env: Bindings) =>
  config(env).routes.find((route) => route.kind === 'cloudflare')?.name ?? 'cloudflare';

export async function applyEmailEvents(batch: MessageBatch<unknown>, env: Bindings): Promise<void> {
  const route = cloudflareRouteName(env);
  for (const message of batch.messages) {
    const body = message.body as Partial<QueuedDeliveryEvent>;
    const event = body?.kind === 'delivery-event' && body.event ? body.event : deliveryEventOfCloudflare(body, route);
    if (!event) {
      console.warn(
        'email event queue: not an Email Sending event, dropped',
        String(JSON.stringify(body ?? null)).slice(0, 200),
      );
      message.ack();
      continue;
    }
    try {
      const result = await applyDeliveryEvent(env, event);
      if (result === 'wait') message.retry({ delaySeconds: REPORT_RETRY_SECONDS });
      else message.ack();
    } catch (error) {
      console.error('email event not applied', error);
      message.retry({ delaySeconds: REPORT_RETRY_SECONDS });
    }
  }
}
