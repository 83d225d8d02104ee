// Reading one email of the send log: the API's detail route and the dashboard's email page.

import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { accountStore } from '../store/account/client';
import type { EmailOwner } from '../store/account/schedule';
import { bucketsOf } from '../store/placement';
import { findBody } from './bodies';

/** An email of the owner with its recipients' outcomes, its timeline and its body; 404 when not the owner's. */
export async function emailDetail(env: Bindings, owner: EmailOwner, emailId: string) {
  const found = await accountStore(env, owner.accountId).findEmailDetail(owner, emailId);
  if (!found) throw new ApiError('EMAIL_NOT_FOUND', 'emailId: no such email for this account');
  const { keptBody, ...detail } = found;
  return { ...detail, body: keptBody ?? (await findBody((await bucketsOf(env, owner.accountId)).bodies, emailId)) };
}
