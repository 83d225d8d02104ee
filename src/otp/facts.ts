// Writing an OTP session's facts to the account's object: the verification's history row with its event, a lock's event, and how
// each session ended (verified, locked, expired) for the metrics.
// Both the engine (at once) and the recipient object's alarm (after a crash) use this; writing twice adds
// no second history row or verified event.

import type { SessionFact } from '../durable-objects/session-outbox';
import type { Bindings } from '../env';
import { accountStore } from '../store/account/client';
import { queueDeliveries } from '../webhooks/deliver';
import { otpEvent } from '../webhooks/produce';
import { recordEvents } from '../webhooks/record';

export async function writeSessionFact(env: Bindings, fact: SessionFact): Promise<void> {
  if (fact.kind === 'verified') {
    const store = accountStore(env, fact.entry.accountId);
    await queueDeliveries(env, fact.entry.accountId, await store.recordVerification(fact.entry));
    return;
  }
  const endedAt = fact.endedAt ?? Date.now();
  const { sessionId, channel } = fact.session;
  const outcome = {
    sessionId,
    accountId: fact.accountId,
    channel,
    outcome: fact.kind,
    sentAt: fact.sentAt ?? endedAt,
    endedAt,
  };
  await accountStore(env, fact.accountId).recordOtpOutcome(outcome);
  if (fact.kind === 'locked') await recordEvents(env, fact.accountId, [otpEvent('otp.locked', fact.session)]);
}
