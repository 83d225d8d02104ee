// Sending domains: adding one (a DKIM key pair made here), checking its records now or on schedule,
// rotating its key, and the key that signs an account's mail from it.
import { config, type DomainsConfig, dkimKeySecret } from '../config';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { newId, newSelector, nowIso } from '../ids';
import { IsolateCache } from '../isolate-cache';
import { lookup } from '../net/dns';
import {
  addSelector,
  createDomain,
  type DkimSelector,
  type Domain,
  deleteDomain,
  dueDomains,
  findDomain,
  findSigningDomain,
  type SigningDomain,
  saveDomain,
} from '../store/control/domains';
import type { WebhookEvent } from '../webhooks/events';
import { recordEvents } from '../webhooks/record';
import { domainOf } from './address';
import type { DkimKey } from './dkim';
import { newDkimKeyPair, openPrivateKey } from './dkim-keys';
import { checkDomain, type Lookup } from './domain-check';
import { parseDomainName } from './domain-name';
import type { OutgoingMail } from './outgoing';
import { envelopeDomain, returnPathAddress } from './return-path';

export const domainNotFound = () => new ApiError('DOMAIN_NOT_FOUND', 'domainId: no such domain for this account');

/** The first check of a new domain or selector: soon, as DNS changes take a few minutes to show. */
export const FIRST_CHECK_MS = 5 * 60_000;
/** Domains the scheduled handler checks per run (each check is up to five lookups). */
const CHECKS_PER_RUN = 10;

const resolverLookup =
  (settings: DomainsConfig): Lookup =>
  (name, type) =>
    lookup(settings.resolverUrl, name, type);

async function newSelectorKey(env: Bindings): Promise<DkimSelector> {
  const pair = await newDkimKeyPair(dkimKeySecret(env));
  return {
    selector: newSelector(),
    publicKey: pair.publicKey,
    sealedPrivateKey: pair.sealedPrivateKey,
    status: 'pending',
    createdAt: nowIso(),
    verifiedAt: null,
    retiresAt: null,
  };
}

/** Adds a domain to the account: pending, with a fresh DKIM key. 400 for a malformed name, 409 for one it has. */
export async function addDomain(env: Bindings, accountId: string, rawName: string): Promise<Domain> {
  const parsed = parseDomainName(rawName);
  if (!parsed.ok) throw new ApiError('INVALID_INPUT', `name: ${parsed.reason}`);
  const created = await createDomain(env.DB, {
    id: newId('dom'),
    accountId,
    name: parsed.name,
    nextCheckAt: Date.now() + FIRST_CHECK_MS,
    selector: await newSelectorKey(env),
  });
  if (created.kind === 'exists') {
    throw new ApiError('DOMAIN_TAKEN', `name: this account already has the domain ${parsed.name}`);
  }
  return created.domain;
}

/** What a status change tells the account's endpoints. */
function domainEvents(before: Domain, after: Domain): WebhookEvent[] {
  if (before.status === after.status) return [];
  const data = { domainId: after.id, name: after.name, status: after.status };
  if (after.status === 'failed') return [{ type: 'domain.failed', data }];
  if (after.status === 'verified' || after.status === 'partially_verified') return [{ type: 'domain.verified', data }];
  return [];
}

/** Signing keys read in this isolate, by account and domain name (dropped when this isolate changes a domain). */
const signing = new IsolateCache<SigningDomain | null>();
const signingKey = (accountId: string, name: string) => `${accountId}\u0000${name}`;

/**
 * Looks at the domain's records now and saves what was found, with its webhook events in the same batch.
 * `taken`: DKIM was found but another account holds the name; the domain keeps a status that does not send.
 */
async function recheck(
  env: Bindings,
  domain: Domain,
  now: number,
): Promise<{ domain: Domain; outcome: 'saved' | 'taken' | 'unavailable' }> {
  const settings = config(env).domains;
  const checked = await checkDomain(domain, settings, resolverLookup(settings), now);
  const save = async (after: Domain) => {
    const saved = await saveDomain(env.DB, after, now);
    // The change is the control plane's; its events go to the account's object next (a failure there loses
    // them, logged: the domain's state, which the API shows, is saved).
    const events = domainEvents(domain, after);
    if (saved.kind === 'saved' && events.length > 0) {
      await recordEvents(env, domain.accountId, events).catch((error: unknown) =>
        console.error('domain events not recorded', domain.id, String(error)),
      );
    }
    return saved.kind;
  };
  signing.forget(signingKey(domain.accountId, domain.name));
  if (checked.kind === 'unavailable') {
    await save(checked.domain);
    return { domain: checked.domain, outcome: 'unavailable' };
  }
  if ((await save(checked.domain)) === 'saved') return { domain: checked.domain, outcome: 'saved' };
  // Another account holds the name: its records are kept, it does not send.
  const held: Domain = { ...checked.domain, status: domain.status === 'failed' ? 'failed' : 'pending' };
  await save(held);
  return { domain: held, outcome: 'taken' };
}

/** POST /domains/{id}/verify: checks now; 409 DOMAIN_TAKEN when another account has the name verified. */
export async function verifyDomain(env: Bindings, accountId: string, id: string): Promise<Domain> {
  const domain = await findDomain(env.DB, accountId, id);
  if (!domain) throw domainNotFound();
  const { domain: after, outcome } = await recheck(env, domain, Date.now());
  if (outcome === 'taken') {
    throw new ApiError('DOMAIN_TAKEN', `${domain.name} is verified by another account: it cannot be verified here`);
  }
  return after;
}

/**
 * A new pending selector; signing moves to it once its record is found, and the one it replaces signs for 7
 * days more. While one is pending, rotating again answers the domain as it is.
 */
export async function rotateDkim(env: Bindings, accountId: string, id: string): Promise<Domain> {
  const domain = await findDomain(env.DB, accountId, id);
  if (!domain) throw domainNotFound();
  if (domain.selectors.some((s) => s.status === 'pending')) return domain;
  const selector = await newSelectorKey(env);
  await addSelector(env.DB, domain.id, selector);
  const rotating: Domain = { ...domain, selectors: [...domain.selectors, selector] };
  // Checked on the pending schedule until the new record shows.
  const nextCheckAt = Date.now() + FIRST_CHECK_MS;
  await saveDomain(env.DB, { ...rotating, checks: 0, nextCheckAt }, Date.now());
  return { ...rotating, checks: 0, nextCheckAt };
}

/** The scheduled handler's part: the domains due a check (pending with backoff, sending ones daily). */
export async function checkDueDomains(env: Bindings, now = Date.now()): Promise<number> {
  const due = await dueDomains(env.DB, now, CHECKS_PER_RUN);
  for (const domain of due) {
    try {
      await recheck(env, domain, now);
    } catch (error) {
      // One domain's failure (a D1 error) must not stop the others; it stays due for the next run.
      console.error('domain check failed', domain.id, error);
    }
  }
  return due.length;
}

/** The account's verified domain of this address, and its signing key; null when mail from it is unsigned. */
export type DomainSigning = { key: DkimKey; status: SigningDomain['status'] };

export async function signingFor(env: Bindings, accountId: string, address: string): Promise<DomainSigning | null> {
  const name = domainOf(address);
  const found = await signing.get(signingKey(accountId, name), () =>
    findSigningDomain(env.DB, accountId, name, Date.now()),
  );
  if (!found) return null;
  const privateKey = await openPrivateKey(found.sealedPrivateKey, dkimKeySecret(env));
  return { key: { domain: found.name, selector: found.selector, privateKey }, status: found.status };
}

/** After a domain was deleted: this isolate stops signing with it at once. */
export const forgetSigning = (accountId: string, name: string) => signing.forget(signingKey(accountId, name));

/**
 * How a message of the account from `address` leaves: signed with its domain's key when that domain is
 * verified (or partially), and with the return path that names it (`messageKey`) when there is one.
 */
export async function senderIdentity(
  env: Bindings,
  accountId: string,
  address: string,
  messageKey: string,
): Promise<Pick<OutgoingMail, 'dkim' | 'envelopeFrom'>> {
  const settings = config(env).domains;
  if (settings.keySecret === null) return {};
  const signing = await signingFor(env, accountId, address);
  const domain = envelopeDomain(settings, signing && { name: signing.key.domain, status: signing.status });
  return {
    ...(signing ? { dkim: signing.key } : {}),
    ...(domain ? { envelopeFrom: await returnPathAddress(settings.keySecret, messageKey, domain) } : {}),
  };
}

/** Deletes one of the account's domains; its mail stops being signed at once. */
export async function removeDomain(env: Bindings, accountId: string, id: string): Promise<void> {
  const domain = await findDomain(env.DB, accountId, id);
  if (!domain || !(await deleteDomain(env.DB, accountId, id))) throw domainNotFound();
  forgetSigning(accountId, domain.name);
}
