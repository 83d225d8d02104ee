// Writing an OTP session's facts to D1: the verification's history row with its event, a lock's event, and how
// each session ended (verified, locked, expired) for the metrics.
// Both the engine (at once) and the recipient object's alarm (after a crash) use this; writing twice adds
// no second history row or verified event.

import type { SessionFact } from '../durable-objects/session-outbox';
import type { Bindings } from '../env';
import { recordVerification } from '../store/account/otp-history';
import { otpOutcomeInsert } from '../store/account/otp-outcomes';
import { queueDeliveries } from '../webhooks/deliver';
import { otpEvent, recordEvents } from '../webhooks/produce';

export async function writeSessionFact(env: Bindings, fact: SessionFact): Promise<void> {
  if (fact.kind === 'verified') {
    await queueDeliveries(env, await recordVerification(env.DB, fact.entry));
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
  await otpOutcomeInsert(env.DB, outcome).run();
  if (fact.kind === 'locked') await recordEvents(env, fact.accountId, [otpEvent('otp.locked', fact.session)]);
}
