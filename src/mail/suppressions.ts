// Adding and removing suppressions by hand: the API's routes and the dashboard's forms, each with its webhook.

import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { accountStore } from '../store/account/client';
import type { Suppression } from '../store/account/suppressions';
import { suppressionEvent } from '../webhooks/produce';
import { recordEvents } from '../webhooks/record';
import { canonicalAddress } from './address';

function announce(
  env: Bindings,
  accountId: string,
  type: 'suppression.added' | 'suppression.removed',
  entry: Suppression,
) {
  const { email, reason, emailId, expiresAt } = entry;
  return recordEvents(env, accountId, [suppressionEvent(type, { email, reason, emailId, expiresAt })]);
}

/** Suppresses an address (reason manual); `suppression.added` when it was not suppressed before. */
export async function suppress(
  env: Bindings,
  accountId: string,
  request: { email: string; note?: string | null; expiresAt?: string | null },
): Promise<Suppression> {
  const { suppression, added } = await accountStore(env, accountId).addSuppression(accountId, {
    email: canonicalAddress(request.email),
    note: request.note ?? null,
    expiresAt: request.expiresAt ? Date.parse(request.expiresAt) : null,
  });
  if (added) await announce(env, accountId, 'suppression.added', suppression);
  return suppression;
}

/** Lifts an address's suppression (`suppression.removed`); 404 when it was not listed. */
export async function unsuppress(env: Bindings, accountId: string, address: string): Promise<string> {
  const email = canonicalAddress(address);
  const removed = await accountStore(env, accountId).removeSuppression(accountId, email);
  if (!removed) throw new ApiError('SUPPRESSION_NOT_FOUND', 'email: not on the suppression list of this account');
  await announce(env, accountId, 'suppression.removed', removed);
  return email;
}
