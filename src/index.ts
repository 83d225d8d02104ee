import { buildApp } from './app';
import type { Bindings } from './env';
import { receiveInbound } from './inbound/receive';
import { checkDueDomains } from './mail/domains';
import { receiveMail } from './mail/inbound';
import { deliverMailBatch, handleDeadLetters } from './queue/consumer';
import { applyEmailEvents } from './queue/email-events';
import type { MailJob } from './queue/jobs';

const app = buildApp();

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    if (batch.queue.endsWith('-dlq')) await handleDeadLetters(batch);
    else if (batch.queue === 'postcode-email-events') await applyEmailEvents(batch as MessageBatch<unknown>, env);
    else await deliverMailBatch(batch, env);
  },
  // Mail to the accounts' receiving domains (docs/inbound.md); bounces and complaints to the return path domains
  // (docs/delivery.md).
  async email(message, env) {
    const outcome = (await receiveInbound(message, env)) ?? (await receiveMail(message, env));
    console.info('inbound mail', message.to, outcome);
  },
  // Every minute, the control plane's own work: sending domains due a DNS check get it. Each account's mail
  // (scheduled, overdue, held, expired) is its object's alarm's.
  async scheduled(_controller, env) {
    await checkDueDomains(env);
  },
} satisfies ExportedHandler<Bindings, MailJob>;

export { AccountStore } from './durable-objects/account-store';
export { OtpRecipient } from './durable-objects/otp-recipient';
export { ProviderIndex } from './durable-objects/provider-index';
export { RateCounter } from './durable-objects/rate-counter';
export { WebhookListener } from './durable-objects/webhook-listener';
