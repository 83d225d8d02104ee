// A public token's send policy (opt-in, docs/otp.md "Where a token's codes may go"): sub-addresses and
// disposable-address domains refused (403 ADDRESS_NOT_ALLOWED), and a cap on codes per recipient domain per hour
// (429, counted per token and domain in a RateCounter).
import disposableDomainList from '../../data/disposable-email-domains.txt';
import type { Credential } from '../auth/credential';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { canonicalAddress } from '../mail/address';
import { type RateLimitCode, rateLimitError } from '../middleware/rate-limit';
import type { OtpSendPolicy } from '../store/control/otp-tokens';
import { countRefusal } from './refusals';

const DOMAIN_WINDOW_SECONDS = 3600;

/** The list as one string until a policy first needs it: isolates that never check pay nothing for the Set. */
let disposableDomains: Set<string> | undefined;

/** Whether `domain` or a domain above it is on the disposable-address list (data/disposable-email-domains.txt). */
export function isDisposableDomain(domain: string): boolean {
  disposableDomains ??= new Set(disposableDomainList.split('\n').filter((line) => line !== ''));
  const labels = domain.toLowerCase().replace(/\.$/, '').split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    if (disposableDomains.has(labels.slice(i).join('.'))) return true;
  }
  return false;
}

/** The address's local part and domain in the mailbox's one spelling (quotes, case and Unicode domains aside). */
function partsOf(email: string): { local: string; domain: string } {
  const address = canonicalAddress(email);
  const at = address.lastIndexOf('@');
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

/** Why the policy refuses this address (a sentence for the error), or null when it may receive codes. */
export function addressRefusal(policy: OtpSendPolicy, email: string): string | null {
  const { local, domain } = partsOf(email);
  if (policy.blockSubaddresses && local.includes('+')) {
    return 'email: this site does not send codes to sub-addresses (a "+" in the part before @)';
  }
  if (policy.blockDisposable && isDisposableDomain(domain)) {
    return 'email: this site does not send codes to disposable-address domains';
  }
  return null;
}

/**
 * A send with a public token that has a policy: the address must be allowed, and its domain must have room in the
 * token's hour. A server key, and a token without a policy, pass. The domain's count is taken before the
 * recipient's limits, so a send they refuse still counts for its domain.
 */
export async function applySendPolicy(
  env: Bindings,
  credential: Credential,
  email: string,
  rateLimitCode: RateLimitCode,
): Promise<void> {
  if (credential.kind !== 'public_token') return;
  const { policy, accountId } = credential;
  const refusal = addressRefusal(policy, email);
  if (refusal) {
    countRefusal(env, accountId, 'instant', 'address_not_allowed');
    throw new ApiError('ADDRESS_NOT_ALLOWED', refusal);
  }
  if (policy.domainSendsPerHour === null) return;
  const { domain } = partsOf(email);
  const name = `otp-send-domain:${credential.id}:${domain}`;
  const counter = env.RATE_COUNTER.get(env.RATE_COUNTER.idFromName(name));
  const decision = await counter.hit(policy.domainSendsPerHour, DOMAIN_WINDOW_SECONDS, 'otp-send-domain');
  if (!decision.allowed) {
    countRefusal(env, accountId, 'instant', 'domain_capped');
    throw rateLimitError(rateLimitCode, decision, 'Too many codes sent to this domain: retry after Retry-After');
  }
}
