// Calling off or moving a scheduled email: the API's routes and the dashboard's forms.

import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { dispatchIfDueSoon } from '../queue/producer';
import { accountStore } from '../store/account/client';
import type { EmailOwner, ScheduleChange } from '../store/account/schedule';
import { bucketsOf } from '../store/placement';
import { queueDeliveries } from '../webhooks/deliver';
import { deleteAttachments } from './attachments';

/** The error of a cancel or a move that changed nothing. */
function unchanged(
  change: Exclude<ScheduleChange, { kind: 'changed' }>,
  code: 'EMAIL_NOT_CANCELABLE' | 'EMAIL_NOT_SCHEDULED',
) {
  if (change.kind === 'not-found') return new ApiError('EMAIL_NOT_FOUND', 'emailId: no such email for this account');
  const verb = code === 'EMAIL_NOT_CANCELABLE' ? 'canceled' : 'moved';
  return new ApiError(code, `emailId: only a SCHEDULED email can be ${verb}; this one is ${change.status}`);
}

/** Cancels a SCHEDULED email (its attachments deleted, `email.canceled` queued). */
export async function cancelEmail(env: Bindings, owner: EmailOwner, emailId: string): Promise<void> {
  const change = await accountStore(env, owner.accountId).cancelScheduled(owner, emailId);
  if (change.kind !== 'changed') throw unchanged(change, 'EMAIL_NOT_CANCELABLE');
  await deleteAttachments((await bucketsOf(env, owner.accountId)).attachments, change.attachments);
  await queueDeliveries(env, owner.accountId, change.deliveryIds);
}

/** Moves a SCHEDULED email to `scheduledAt` (validated by the caller's schema). */
export async function moveEmail(env: Bindings, owner: EmailOwner, emailId: string, scheduledAt: string) {
  const change = await accountStore(env, owner.accountId).reschedule(owner, emailId, scheduledAt);
  if (change.kind !== 'changed') throw unchanged(change, 'EMAIL_NOT_SCHEDULED');
  await dispatchIfDueSoon(env, owner.accountId, [{ id: emailId, scheduledAt }]);
}
