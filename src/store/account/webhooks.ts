// Webhook endpoints of an account and their delivery log.

import { nowIso } from '../../ids';
import type { EventType, WebhookEvent } from '../../webhooks/events';
import type { SqlResult, SqlStatement } from '../sql';
import type { AccountSql } from './object-sql';

export type WebhookEndpoint = {
  id: string;
  accountId: string;
  url: string;
  events: EventType[];
  description: string | null;
  secret: string;
  enabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
};

type EndpointRow = {
  id: string;
  account_id: string;
  url: string;
  events: string;
  description: string | null;
  secret: string;
  enabled: number;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
};

const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  accountId: row.account_id,
  url: row.url,
  events: JSON.parse(row.events) as EventType[],
  description: row.description,
  secret: row.secret,
  enabled: row.enabled === 1,
  disabledReason: row.disabled_reason,
  failingSince: row.failing_since,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export const MAX_ENDPOINTS_PER_ACCOUNT = 20;

/** The event types at least one enabled endpoint of the account wants. */
export async function subscribedEventTypes(db: AccountSql, accountId: string): Promise<Set<string>> {
  const { results } = await db
    .prepare(
      `SELECT DISTINCT e.value AS type FROM webhook_endpoints AS w, json_each(w.events) AS e
       WHERE w.account_id = ? AND w.enabled = 1`,
    )
    .bind(accountId)
    .all<{ type: string }>();
  return new Set(results.map((row) => row.type));
}

/** Creates an endpoint unless the account has `MAX_ENDPOINTS_PER_ACCOUNT` already (then null). */
export async function createEndpoint(
  db: AccountSql,
  endpoint: Pick<WebhookEndpoint, 'id' | 'accountId' | 'url' | 'events' | 'description' | 'secret'>,
): Promise<WebhookEndpoint | null> {
  const at = nowIso();
  const row = await db
    .prepare(
      `INSERT INTO webhook_endpoints (id, account_id, url, events, description, secret, enabled, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?7
       WHERE (SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = ?2 AND listener = 0) < ?8
       RETURNING *`,
    )
    .bind(
      endpoint.id,
      endpoint.accountId,
      endpoint.url,
      JSON.stringify(endpoint.events),
      endpoint.description,
      endpoint.secret,
      at,
      MAX_ENDPOINTS_PER_ACCOUNT,
    )
    .first<EndpointRow>();
  return row ? toEndpoint(row) : null;
}

export async function listEndpoints(db: AccountSql, accountId: string): Promise<WebhookEndpoint[]> {
  const rows = await db
    .prepare('SELECT * FROM webhook_endpoints WHERE account_id = ? AND listener = 0 ORDER BY created_at, id')
    .bind(accountId)
    .all<EndpointRow>();
  return rows.results.map(toEndpoint);
}

export async function findEndpoint(db: AccountSql, accountId: string, id: string): Promise<WebhookEndpoint | null> {
  const row = await db
    .prepare('SELECT * FROM webhook_endpoints WHERE id = ? AND account_id = ? AND listener = 0')
    .bind(id, accountId)
    .first<EndpointRow>();
  return row ? toEndpoint(row) : null;
}

export type EndpointChanges = Partial<Pick<WebhookEndpoint, 'url' | 'events' | 'description' | 'enabled' | 'secret'>>;

/** Applies the given changes; enabling again clears the failure record. Null when not the account's. */
export async function updateEndpoint(
  db: AccountSql,
  accountId: string,
  id: string,
  changes: EndpointChanges,
): Promise<WebhookEndpoint | null> {
  const row = await db
    .prepare(
      `UPDATE webhook_endpoints SET url = COALESCE(?3, url), events = COALESCE(?4, events),
         description = CASE WHEN ?5 = 1 THEN ?6 ELSE description END, secret = COALESCE(?7, secret),
         enabled = COALESCE(?8, enabled),
         disabled_reason = CASE WHEN ?8 = 1 THEN NULL ELSE disabled_reason END,
         failing_since = CASE WHEN ?8 = 1 THEN NULL ELSE failing_since END, updated_at = ?9
       WHERE id = ?1 AND account_id = ?2 AND listener = 0 RETURNING *`,
    )
    .bind(
      id,
      accountId,
      changes.url ?? null,
      changes.events ? JSON.stringify(changes.events) : null,
      'description' in changes ? 1 : 0,
      changes.description ?? null,
      changes.secret ?? null,
      changes.enabled === undefined ? null : changes.enabled ? 1 : 0,
      nowIso(),
    )
    .first<EndpointRow>();
  return row ? toEndpoint(row) : null;
}

export async function deleteEndpoint(db: AccountSql, accountId: string, id: string): Promise<boolean> {
  return deleteEndpointOfKind(db, accountId, id, 0);
}

async function deleteEndpointOfKind(db: AccountSql, accountId: string, id: string, listener: 0 | 1) {
  const [removed] = await db.batch([
    db
      .prepare('DELETE FROM webhook_endpoints WHERE id = ? AND account_id = ? AND listener = ?')
      .bind(id, accountId, listener),
    db
      .prepare(
        `DELETE FROM webhook_deliveries WHERE endpoint_id = ?1
           AND NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?1)`,
      )
      .bind(id),
  ]);
  return removed!.meta.changes > 0;
}

/** How many listening sessions (`postcode webhooks listen`) an account may have connected at once. */
export const MAX_LISTENERS_PER_ACCOUNT = 5;

export type Listener = { id: string; events: EventType[]; createdAt: string };

/**
 * Registers a connected listening session as an endpoint of its own kind: the API's endpoint routes neither
 * show nor count it, deliveries reach it like any endpoint's (its URL names the session). False when the account
 * has `MAX_LISTENERS_PER_ACCOUNT` already.
 */
export async function addListener(
  db: AccountSql,
  listener: { id: string; accountId: string; events: EventType[]; secret: string },
): Promise<boolean> {
  const at = nowIso();
  const row = await db
    .prepare(
      `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, enabled, listener, created_at, updated_at)
       SELECT ?1, ?2, 'listen:' || ?1, ?3, ?4, 1, 1, ?5, ?5
       WHERE (SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = ?2 AND listener = 1) < ?6
       RETURNING id`,
    )
    .bind(
      listener.id,
      listener.accountId,
      JSON.stringify(listener.events),
      listener.secret,
      at,
      MAX_LISTENERS_PER_ACCOUNT,
    )
    .first<{ id: string }>();
  return row !== null;
}

/** Forgets a listening session and its deliveries; false when it was gone already. */
export async function removeListener(db: AccountSql, accountId: string, id: string): Promise<boolean> {
  return deleteEndpointOfKind(db, accountId, id, 1);
}

/** The account's connected listening sessions, oldest first. */
export async function listListeners(db: AccountSql, accountId: string): Promise<Listener[]> {
  const rows = await db
    .prepare(
      `SELECT id, events, created_at FROM webhook_endpoints WHERE account_id = ? AND listener = 1
       ORDER BY created_at, id`,
    )
    .bind(accountId)
    .all<{ id: string; events: string; created_at: string }>();
  return rows.results.map((r) => ({ id: r.id, events: JSON.parse(r.events) as EventType[], createdAt: r.created_at }));
}

/**
 * The statement that records `events` (at `at`, epoch milliseconds) for every enabled endpoint of the account
 * subscribed to them, as pending deliveries (RETURNING their ids, to be queued). Put it in the transaction of
 * the fact the events record; `condition` may use ?4 and ?5 (`params`) to tie it to that fact. A delivery
 * keeps its event's data; its payload is composed from it (webhook-deliveries.ts).
 */
export function deliveriesInsert(
  db: AccountSql,
  accountId: string,
  events: WebhookEvent[],
  at: number,
  condition = '1',
  params: (string | null)[] = [],
): SqlStatement {
  return db
    .prepare(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, data, due_at, created_at, updated_at)
       SELECT 'msg_' || lower(hex(randomblob(13))), w.id, json_extract(j.value, '$.type'),
         json(json_extract(j.value, '$.data')), ?2, ?2, ?2
       FROM json_each(?3) AS j JOIN webhook_endpoints AS w ON w.account_id = ?1 AND w.enabled = 1
         AND EXISTS (SELECT 1 FROM json_each(w.events) AS e WHERE e.value = json_extract(j.value, '$.type'))
       WHERE ${condition}
       RETURNING id`,
    )
    .bind(accountId, at, JSON.stringify(events), ...params);
}

/** The delivery ids a `deliveriesInsert` statement returned. */
export const insertedIds = (result: SqlResult | undefined): string[] =>
  ((result?.results ?? []) as { id: string }[]).map((r) => r.id);

/** Records events of a fact kept elsewhere (an OTP session, a domain, a sender) as pending deliveries; their ids. */
export async function recordWebhookEvents(
  db: AccountSql,
  accountId: string,
  events: WebhookEvent[],
  at: number,
): Promise<string[]> {
  return insertedIds(await deliveriesInsert(db, accountId, events, at).all());
}
