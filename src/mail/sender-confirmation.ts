// Senders an account adds itself: verified at once on its verified domain; otherwise pending until the
// address confirms, by one press on a hosted page linked from a confirmation mail (scanner-safe: opening the
// link confirms nothing). The token is single-use, 24 h, and only its SHA-256 is stored.
import { sha256Hex } from '../auth/crypto';
import { config, requireRoutes } from '../config';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { newLinkToken } from '../ids';
import { SENDING_STATUSES } from '../store/control/domains';
import {
  confirmSender,
  createSender,
  deleteSender,
  findSender,
  findSenderByToken,
  findSendingRights,
  renewConfirmToken,
  type Sender,
} from '../store/control/senders';
import type { WebhookEvent } from '../webhooks/events';
import { recordEvents } from '../webhooks/record';
import { submitEmails } from './accept';
import { domainOf } from './address';
import { composeEmail } from './compose';

const TOKEN_LIFETIME_MS = 24 * 3_600_000;

export const senderNotFound = () => new ApiError('SENDER_NOT_FOUND', 'senderId: no such sender for this account');

const verifiedEvent = (sender: Sender): WebhookEvent => ({
  type: 'sender.verified',
  data: { senderId: sender.id, email: sender.email, status: 'verified' },
});

/** The hosted page's address for a token (PUBLIC_BASE_URL is required, as for the verify page). */
function confirmUrl(env: Bindings, token: string): string {
  const base = config(env).publicBaseUrl;
  if (!base) throw new Error('Invalid configuration: PUBLIC_BASE_URL is not set (the confirmation page needs it)');
  const url = new URL('/confirm-sender', base);
  url.searchParams.set('token', token);
  return url.toString();
}

async function newToken() {
  const token = newLinkToken();
  return { token, stored: { hash: await sha256Hex(token), expiresAt: Date.now() + TOKEN_LIFETIME_MS } };
}

/** Queues the confirmation mail (URGENT, from the service's sender, shown in the account's send log). */
async function mailConfirmation(env: Bindings, sender: Sender, token: string): Promise<void> {
  const url = confirmUrl(env, token);
  const composed = await composeEmail(
    env,
    { accountId: sender.accountId, test: false },
    {
      to: [sender.email],
      subject: 'Confirm your address as a sender',
      text: `Someone asked to send email as {{email}} through postcode.\n\nIf it was you, open this link and press "Confirm" within 24 hours:\n{{url}}\n\nIf it was not you, ignore this mail: nothing is sent as you without the confirmation.\n`,
      html: '<p>Someone asked to send email as <strong>{{email}}</strong> through postcode.</p><p>If it was you, open <a href="{{url}}">this link</a> and press “Confirm” within 24 hours.</p><p>If it was not you, ignore this mail: nothing is sent as you without the confirmation.</p>',
      vars: { email: sender.email, url },
      priority: 'URGENT',
      tags: [{ name: 'postcode', value: 'sender_confirmation' }],
    },
  );
  await submitEmails(env, [composed], { countTowardsAllowance: false });
}

/** Adds a sender: verified on a verified domain of the account (sender.verified), else pending with its mail. */
export async function addSender(
  env: Bindings,
  accountId: string,
  request: { email: string; name: string | null },
): Promise<Sender> {
  const domain = domainOf(request.email);
  const { sender: existing, domainStatus } = await findSendingRights(env.DB, accountId, request.email, domain);
  if (existing) throw new ApiError('INVALID_INPUT', `email: already a sender of this account (${existing.id})`);
  if (domainStatus !== null && SENDING_STATUSES.includes(domainStatus)) {
    const sender = await createSender(env.DB, accountId, request.email, request.name);
    // The sender is the control plane's and kept; its event goes to the account's object next (lost if that fails).
    await recordEvents(env, accountId, [verifiedEvent(sender)]).catch((error: unknown) =>
      console.error('sender.verified not recorded', sender.id, String(error)),
    );
    return sender;
  }
  requireRoutes(env);
  const { token, stored } = await newToken();
  const sender = await createSender(env.DB, accountId, request.email, request.name, stored);
  await mailConfirmation(env, sender, token);
  return sender;
}

/** A new confirmation mail for a pending sender (the earlier link stops working); a verified one is left as is. */
export async function resendConfirmation(env: Bindings, accountId: string, id: string): Promise<Sender> {
  const sender = await findSender(env.DB, accountId, id);
  if (!sender) throw senderNotFound();
  if (sender.verified) return sender;
  requireRoutes(env);
  const { token, stored } = await newToken();
  if (await renewConfirmToken(env.DB, accountId, id, stored)) await mailConfirmation(env, sender, token);
  return sender;
}

/** The stored hash of a token of ours, or null for text that cannot be one. */
const tokenHash = (token: string) => (/^[a-z2-7]{32}$/.test(token) ? sha256Hex(token) : null);

/** The pending sender a token would confirm (the page before the press), or null. */
export async function senderOfToken(env: Bindings, token: string): Promise<Sender | null> {
  const hash = await tokenHash(token);
  return hash ? findSenderByToken(env.DB, hash, Date.now()) : null;
}

/** The press: confirms the sender of a live token once, with its sender.verified event; null otherwise. */
export async function confirmToken(env: Bindings, token: string): Promise<Sender | null> {
  const hash = await tokenHash(token);
  const pending = hash ? await findSenderByToken(env.DB, hash, Date.now()) : null;
  if (!hash || !pending) return null;
  const confirmed = await confirmSender(env.DB, hash, Date.now());
  if (!confirmed) return null;
  await recordEvents(env, confirmed.accountId, [verifiedEvent(confirmed)]).catch((error: unknown) =>
    console.error('sender.verified not recorded', confirmed.id, String(error)),
  );
  return confirmed;
}

export async function removeSender(env: Bindings, accountId: string, id: string): Promise<void> {
  if (!(await deleteSender(env.DB, accountId, id))) throw senderNotFound();
}
