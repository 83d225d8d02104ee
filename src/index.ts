import { buildApp } from './app';
import { getSettings } from './db/settings';
import type { Bindings } from './env';
import { deliverMailBatch, handleDeadLetters } from './queue/consumer';
import { type QueuedJob, releaseHeldMail } from './queue/producer';

const app = buildApp();

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    if (batch.queue.endsWith('-dlq')) await handleDeadLetters(batch, env);
    else await deliverMailBatch(batch, env);
  },
  // Freeze mode safety net: if an unfreeze was interrupted, held mail still goes out.
  async scheduled(_controller, env) {
    if (!(await getSettings(env.DB)).frozen) await releaseHeldMail(env);
  },
} satisfies ExportedHandler<Bindings, QueuedJob>;

export { OtpRecipient } from './durable-objects/otp-recipient';
export { RateCounter } from './durable-objects/rate-counter';
