import { buildApp } from './app';
import type { Bindings } from './env';
import { deliverMailBatch, handleDeadLetters } from './queue/consumer';
import type { MailJob } from './queue/producer';

const app = buildApp();

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    if (batch.queue.endsWith('-dlq')) await handleDeadLetters(batch, env);
    else await deliverMailBatch(batch, env);
  },
} satisfies ExportedHandler<Bindings, MailJob>;
