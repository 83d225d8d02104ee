import { buildApp } from './app';
import { config } from './config';
import type { Bindings } from './env';
import { checkDueDomains } from './mail/domains';
import { receiveMail } from './mail/inbound';
import { deliverMailBatch, handleDeadLetters } from './queue/consumer';
import { applyEmailEvents } from './queue/email-events';
import type { MailJob } from './queue/jobs';
import { dispatchScheduledMail, recoverOverdueMail, releaseHeldMail } from './queue/producer';
import { deleteExpired } from './retention';
import { getSettings } from './store/control/settings';
import { recoverOverdueDeliveries } from './webhooks/deliver';

const app = buildApp();

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    if (batch.queue.endsWith('-dlq')) await handleDeadLetters(batch);
    else if (batch.queue === 'postcode-email-events') await applyEmailEvents(batch as MessageBatch<unknown>, env);
    else await deliverMailBatch(batch, env);
  },
  // Bounces and complaints mailed to the return path domains (docs/delivery.md).
  async email(message, env) {
    const outcome = await receiveMail(message, env);
    console.info('inbound mail', message.to, outcome);
  },
  // Every minute: held mail goes out if an unfreeze was interrupted; scheduled mail coming due is queued;
  // overdue mail and webhook deliveries are queued again. Sending domains due a DNS check get it. Then
  // retention deletes what expired (bounded amounts per run, after the sweeps so it never delays them).
  async scheduled(_controller, env) {
    if (!(await getSettings(env.DB)).frozen) await releaseHeldMail(env);
    await dispatchScheduledMail(env);
    const { graceSeconds } = config(env).outbox;
    await recoverOverdueMail(env, graceSeconds);
    await recoverOverdueDeliveries(env, graceSeconds);
    await checkDueDomains(env);
    await deleteExpired(env);
  },
} satisfies ExportedHandler<Bindings, MailJob>;

export { OtpRecipient } from './durable-objects/otp-recipient';
export { RateCounter } from './durable-objects/rate-counter';
