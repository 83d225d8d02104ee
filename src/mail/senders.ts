// Who may send: a verified sender of the account, or any address on its verified (or partially verified)
// domain. A refusal says which of the three it was: an unknown sender, one still pending, a domain not verified.
import { config, defaultSender } from '../config';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { SENDING_STATUSES } from '../store/control/domains';
import { findSender, findSendingRights, type Sender } from '../store/control/senders';
import { domainOf, type Mailbox } from './address';

/** The sender a message goes out as, and the sender record it names (null: the default, or a domain address). */
export type SendingAddress = { sender: Mailbox; senderId: string | null };

const refused = (message: string) => new ApiError('SENDER_NOT_VERIFIED', message);
const pending = (field: string, sender: Sender) =>
  refused(`${field}: ${sender.email} is a pending sender: its address has not confirmed yet`);

/** `from` (an address, its display name if given) or `senderEmailId`; neither: the service's default sender. */
export async function sendingAddress(
  env: Bindings,
  accountId: string,
  request: { from?: Mailbox; senderEmailId?: string },
): Promise<SendingAddress> {
  const { from, senderEmailId } = request;
  if (senderEmailId !== undefined) {
    const sender = await findSender(env.DB, accountId, senderEmailId);
    if (!sender) throw refused('senderEmailId: no sender with this id in this account');
    if (!sender.verified) throw pending('senderEmailId', sender);
    return { sender: { email: sender.email, name: sender.name }, senderId: sender.id };
  }
  if (!from) return { sender: defaultSender(env), senderId: null };
  const domain = domainOf(from.email);
  const rights = await findSendingRights(env.DB, accountId, from.email, domain);
  const { sender } = rights;
  if (sender?.verified) return { sender: { email: sender.email, name: from.name ?? sender.name }, senderId: sender.id };
  // Without DKIM_KEY_SECRET there are no usable domains (their keys cannot be opened).
  const status = config(env).domains.keySecret === null ? null : rights.domainStatus;
  if (status !== null && SENDING_STATUSES.includes(status)) return { sender: from, senderId: null };
  if (sender) throw pending('from', sender);
  if (status !== null) throw refused(`from: the domain ${domain} is not verified (status ${status})`);
  throw refused(`from: ${from.email} is not a sender of this account, and ${domain} is not a verified domain of it`);
}
