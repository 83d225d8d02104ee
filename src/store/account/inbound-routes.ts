// An account's inbound routes: a pattern on one of its receiving domains and what to do with mail it matches.

import { nowIso } from '../../ids';
import type { AccountSql } from './object-sql';

export type InboundAction = 'webhook' | 'store' | 'reject';

export type InboundRoute = {
  id: string;
  accountId: string;
  domain: string;
  /** `support` (exact), `support+*` (its sub-addresses) or `*` (any), lower-case. */
  localPart: string;
  action: InboundAction;
  /** With `reject`: the reason the sender's server is given. */
  rejectReason: string | null;
  createdAt: string;
  updatedAt: string;
};

type RouteRow = {
  id: string;
  account_id: string;
  domain: string;
  local_part: string;
  action: InboundAction;
  reject_reason: string | null;
  created_at: string;
  updated_at: string;
};

const toRoute = (row: RouteRow): InboundRoute => ({
  id: row.id,
  accountId: row.account_id,
  domain: row.domain,
  localPart: row.local_part,
  action: row.action,
  rejectReason: row.reject_reason,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export const MAX_INBOUND_ROUTES = 100;

export type NewInboundRoute = Pick<
  InboundRoute,
  'id' | 'accountId' | 'domain' | 'localPart' | 'action' | 'rejectReason'
>;

/**
 * Adds a route: `limit` when the account has `MAX_INBOUND_ROUTES`, `exists` when the pattern has a route (one
 * route per pattern, so which one acts is never a question).
 */
export async function createInboundRoute(
  db: AccountSql,
  route: NewInboundRoute,
): Promise<InboundRoute | 'limit' | 'exists'> {
  const taken = await db
    .prepare('SELECT 1 AS x FROM inbound_routes WHERE account_id = ? AND domain = ? AND local_part = ?')
    .bind(route.accountId, route.domain, route.localPart)
    .first();
  if (taken) return 'exists';
  const at = nowIso();
  const row = await db
    .prepare(
      `INSERT INTO inbound_routes (id, account_id, domain, local_part, action, reject_reason, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7
       WHERE (SELECT COUNT(*) FROM inbound_routes WHERE account_id = ?2) < ?8
       RETURNING *`,
    )
    .bind(
      route.id,
      route.accountId,
      route.domain,
      route.localPart,
      route.action,
      route.rejectReason,
      at,
      MAX_INBOUND_ROUTES,
    )
    .first<RouteRow>();
  return row ? toRoute(row) : 'limit';
}

export async function listInboundRoutes(db: AccountSql, accountId: string): Promise<InboundRoute[]> {
  const rows = await db
    .prepare('SELECT * FROM inbound_routes WHERE account_id = ? ORDER BY created_at, id')
    .bind(accountId)
    .all<RouteRow>();
  return rows.results.map(toRoute);
}

export async function findInboundRoute(db: AccountSql, accountId: string, id: string): Promise<InboundRoute | null> {
  const row = await db
    .prepare('SELECT * FROM inbound_routes WHERE id = ? AND account_id = ?')
    .bind(id, accountId)
    .first<RouteRow>();
  return row ? toRoute(row) : null;
}

/** The routes of one receiving domain (what an arriving message is matched against). */
export async function inboundRoutesOfDomain(
  db: AccountSql,
  accountId: string,
  domain: string,
): Promise<InboundRoute[]> {
  const rows = await db
    .prepare('SELECT * FROM inbound_routes WHERE account_id = ? AND domain = ?')
    .bind(accountId, domain)
    .all<RouteRow>();
  return rows.results.map(toRoute);
}

/** Changes a route's action (and reason); null when it is not the account's. */
export async function updateInboundRoute(
  db: AccountSql,
  accountId: string,
  id: string,
  change: Pick<InboundRoute, 'action' | 'rejectReason'>,
): Promise<InboundRoute | null> {
  const row = await db
    .prepare(
      `UPDATE inbound_routes SET action = ?3, reject_reason = ?4, updated_at = ?5
       WHERE id = ?1 AND account_id = ?2 RETURNING *`,
    )
    .bind(id, accountId, change.action, change.rejectReason, nowIso())
    .first<RouteRow>();
  return row ? toRoute(row) : null;
}

export async function deleteInboundRoute(db: AccountSql, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .prepare('DELETE FROM inbound_routes WHERE id = ? AND account_id = ?')
    .bind(id, accountId)
    .run();
  return result.meta.changes > 0;
}
