// An account's own domains in receiving: turning receiving on and off on a sending domain that signs (so one
// account holds it), the account a name receives for, and the domains an account may claim in a From header.
import { config } from '../config';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { IsolateCache } from '../isolate-cache';
import { domainNotFound, FIRST_CHECK_MS } from '../mail/domains';
import { type Domain, domainNamesOf, findDomain, SENDING_STATUSES } from '../store/control/domains';
import { accountOfInboundName, clearInboundName, setInboundName } from '../store/control/inbound-domains';
import { receivingDomains } from './routes';

/**
 * The account each own receiving name belongs to, as this isolate last read it. A name nobody receives at is not
 * kept: mail to a name just turned on must not be refused for the cache's life.
 */
const receivers = new IsolateCache<string | null>({ keep: (accountId) => accountId !== null });

/** The account that receives at `name` on a domain of its own; null when none does. */
export const accountReceivingAt = (env: Bindings, name: string) =>
  receivers.get(name, () => accountOfInboundName(env.DB, name));

const invalidSubdomain = (message: string) =>
  new ApiError('INVALID_INPUT', `subdomain: ${message}`, { details: [{ path: 'subdomain', message }] });

/**
 * Receiving at the domain or a subdomain of it (a second call moves it). 409 DOMAIN_NOT_VERIFIED before the
 * domain signs, DOMAIN_TAKEN when another account holds a more specific domain over the name; 503 without an MX
 * host to point at.
 */
export async function enableDomainInbound(
  env: Bindings,
  accountId: string,
  domainId: string,
  subdomain: string | undefined,
): Promise<Domain> {
  const settings = config(env).domains;
  if (!settings.inboundMx) {
    throw new ApiError(
      'INBOUND_NOT_CONFIGURED',
      'Receiving on your own domains is not set up on this service (INBOUND_MX)',
    );
  }
  const domain = await findDomain(env.DB, accountId, domainId);
  if (!domain) throw domainNotFound();
  if (!SENDING_STATUSES.includes(domain.status)) {
    throw new ApiError(
      'DOMAIN_NOT_VERIFIED',
      `${domain.name} does not sign yet (status ${domain.status}): verify it before it receives mail`,
    );
  }
  const sub = subdomain?.toLowerCase();
  const name = sub ? `${sub}.${domain.name}` : domain.name;
  // Mail to a name that starts with the return path's label goes to the bounce reader, never to routes.
  if (name.split('.')[0] === settings.returnPathSubdomain || name === settings.globalReturnPath) {
    throw invalidSubdomain(`${name} is a return path's name: choose another subdomain`);
  }
  if (name.length > 253) throw invalidSubdomain(`${name} is longer than 253 characters`);
  const set = await setInboundName(env.DB, accountId, domain.id, name, domain.name, Date.now() + FIRST_CHECK_MS);
  if (set === 'missing') throw domainNotFound();
  if (set === 'taken') {
    throw new ApiError('DOMAIN_TAKEN', `subdomain: ${name} is under a domain another account holds`);
  }
  forget(domain.inboundName, name);
  const after = await findDomain(env.DB, accountId, domainId);
  if (!after) throw domainNotFound();
  return after;
}

/** Receiving there off; the domain as it is when it was off already. */
export async function disableDomainInbound(env: Bindings, accountId: string, domainId: string): Promise<Domain> {
  const domain = await findDomain(env.DB, accountId, domainId);
  if (!domain) throw domainNotFound();
  if (domain.inboundName === null) return domain;
  if (!(await clearInboundName(env.DB, accountId, domainId))) throw domainNotFound();
  forget(domain.inboundName);
  return { ...domain, inboundName: null, inboundStatus: 'pending' };
}

/** This isolate's answers for names that changed (other isolates' expire within the cache's life). */
const forget = (...names: (string | null)[]) => {
  for (const name of names) if (name) receivers.forget(name);
};

/** Its sending domains and its receiving domains: mail From one of them that fails DMARC is flagged. */
export async function ownDomainsOf(env: Bindings, accountId: string): Promise<string[]> {
  const [sending, receiving] = await Promise.all([domainNamesOf(env.DB, accountId), receivingDomains(env, accountId)]);
  return [...sending, ...receiving.map((d) => d.domain)];
}
