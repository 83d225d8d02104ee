// An account's receiving domains and its inbound routes: the rules the API's routes apply (patterns on the
// account's own domains only, one route per pattern, the limit).
import { config } from '../config';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { accountStore } from '../store/account/client';
import { type InboundAction, type InboundRoute, MAX_INBOUND_ROUTES } from '../store/account/inbound-routes';
import { inboundNamesOf } from '../store/control/inbound-domains';
import { inboundSlugOf } from '../store/control/inbound-slugs';
import { parsePattern } from './patterns';

/** What the sender's server is told when a `reject` route names no reason. */
export const DEFAULT_REJECT_REASON = 'This address does not accept mail';

export type ReceivingDomain = { domain: string; kind: 'subdomain' | 'domain'; domainId: string | null };

/**
 * The domains the account receives at: its subdomain under INBOUND_DOMAIN (none when that is unset), then the
 * names its own sending domains receive at.
 */
export async function receivingDomains(env: Bindings, accountId: string): Promise<ReceivingDomain[]> {
  const parent = config(env).inbound.domain;
  const [slug, own] = await Promise.all([
    parent ? inboundSlugOf(env.DB, accountId) : null,
    inboundNamesOf(env.DB, accountId),
  ]);
  return [
    ...(slug ? [{ domain: `${slug}.${parent}`, kind: 'subdomain' as const, domainId: null }] : []),
    ...own.map((d) => ({ domain: d.name, kind: 'domain' as const, domainId: d.domainId })),
  ];
}

export const routeNotFound = () =>
  new ApiError('INBOUND_ROUTE_NOT_FOUND', 'routeId: no such inbound route for this account');

const invalidPattern = (message: string) =>
  new ApiError('INVALID_INPUT', `pattern: ${message}`, { details: [{ path: 'pattern', message }] });

function reasonWithoutReject() {
  const message = 'a reason goes with action reject only';
  return new ApiError('INVALID_INPUT', `rejectReason: ${message}`, { details: [{ path: 'rejectReason', message }] });
}

export const patternOf = (route: Pick<InboundRoute, 'localPart' | 'domain'>) => `${route.localPart}@${route.domain}`;

/** A new route; 400 for a pattern not on the account's domains, 409 for a taken pattern or past the limit. */
export async function addInboundRoute(
  env: Bindings,
  accountId: string,
  body: { pattern: string; action: InboundAction; rejectReason?: string },
): Promise<InboundRoute> {
  if (body.rejectReason !== undefined && body.action !== 'reject') throw reasonWithoutReject();
  const parsed = parsePattern(body.pattern);
  if ('error' in parsed) throw invalidPattern(parsed.error);
  const domains = await receivingDomains(env, accountId);
  if (!domains.some((d) => d.domain === parsed.domain)) {
    const own = domains.map((d) => d.domain).join(', ') || 'none';
    throw invalidPattern(`${parsed.domain} is not a receiving domain of this account (its domains: ${own})`);
  }
  const created = await accountStore(env, accountId).createInboundRoute({
    id: newId('inr'),
    accountId,
    ...parsed,
    action: body.action,
    rejectReason: body.action === 'reject' ? (body.rejectReason ?? DEFAULT_REJECT_REASON) : null,
  });
  if (created === 'exists') {
    throw new ApiError('INBOUND_ROUTE_EXISTS', `pattern: ${patternOf(parsed)} has a route already; change that one`);
  }
  if (created === 'limit') {
    throw new ApiError('INBOUND_ROUTE_LIMIT_REACHED', `An account has at most ${MAX_INBOUND_ROUTES} inbound routes`);
  }
  return created;
}

/** Changes a route's action; a reason goes with `reject` only. */
export async function changeInboundRoute(
  env: Bindings,
  accountId: string,
  id: string,
  body: { action?: InboundAction; rejectReason?: string },
): Promise<InboundRoute> {
  const store = accountStore(env, accountId);
  const route = await store.findInboundRoute(accountId, id);
  if (!route) throw routeNotFound();
  const action = body.action ?? route.action;
  if (body.rejectReason !== undefined && action !== 'reject') throw reasonWithoutReject();
  const rejectReason = action === 'reject' ? (body.rejectReason ?? route.rejectReason ?? DEFAULT_REJECT_REASON) : null;
  const changed = await store.updateInboundRoute(accountId, id, { action, rejectReason });
  if (!changed) throw routeNotFound();
  return changed;
}
