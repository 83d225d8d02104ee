// The webhook delivery log: what the consumer claims and records, what the account alarm queues again, and what
// an account reads (GET /api/v1/webhooks/{webhookId}/deliveries).

import { listCount, type PageRequest, readPage } from '../paging';
import { isoOf } from '../time';
import type { AccountSql } from './object-sql';
import type { WebhookEndpoint } from './webhooks';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export type WebhookDelivery = {
  id: string;
  endpointId: string;
  eventType: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  /** The start of the last answer's body; null when no answer came. */
  lastResponse: string | null;
  createdAt: string;
  updatedAt: string;
};

type DeliveryRow = {
  id: string;
  endpoint_id: string;
  event_type: string;
  data: string;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_response: string | null;
  created_at: number;
  updated_at: number;
};

/**
 * The body every attempt sends: `{ type, createdAt, data }`, composed from the row (which keeps only the
 * data), so the same delivery always sends the same bytes.
 */
const payloadOf = (row: DeliveryRow) =>
  `{"type":${JSON.stringify(row.event_type)},"createdAt":"${isoOf(row.created_at)}","data":${row.data}}`;

const toDelivery = (row: DeliveryRow): WebhookDelivery => ({
  id: row.id,
  endpointId: row.endpoint_id,
  eventType: row.event_type,
  payload: payloadOf(row),
  status: row.status,
  attempts: row.attempts,
  lastStatus: row.last_status,
  lastError: row.last_error,
  lastResponse: row.last_response,
  createdAt: isoOf(row.created_at),
  updatedAt: isoOf(row.updated_at),
});

/** Newest first; the total from the counter a trigger keeps (migrations/0001_init.sql). */
export const listDeliveries = (db: AccountSql, endpointId: string, request: PageRequest) =>
  readPage(
    db,
    {
      select: 'SELECT * FROM webhook_deliveries WHERE endpoint_id = ?',
      binds: [endpointId],
      order: { time: 'created_at', clock: 'ms', key: 'id' },
      count: listCount(db, 'webhook_deliveries', endpointId),
    },
    request,
    toDelivery,
  );

/** A new pending delivery of a `webhook.test` event (returns its id). */
export async function insertTestDelivery(db: AccountSql, endpoint: WebhookEndpoint): Promise<string> {
  const row = await db
    .prepare(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, data, due_at, created_at, updated_at)
       VALUES ('msg_' || lower(hex(randomblob(13))), ?1, 'webhook.test', ?2, ?3, ?3, ?3) RETURNING id`,
    )
    .bind(endpoint.id, JSON.stringify({ webhookId: endpoint.id }), Date.now())
    .first<{ id: string }>();
  return row!.id;
}

/** Makes a delivery of the endpoint pending and due now (manual retry); false when there is none. */
export async function resetDelivery(db: AccountSql, endpointId: string, id: string): Promise<WebhookDelivery | null> {
  const at = Date.now();
  const row = await db
    .prepare(
      `UPDATE webhook_deliveries SET status = 'pending', due_at = ?3, lease_until = NULL, updated_at = ?3
       WHERE id = ?1 AND endpoint_id = ?2 RETURNING *`,
    )
    .bind(id, endpointId, at)
    .first<DeliveryRow>();
  return row ? toDelivery(row) : null;
}

export type ClaimedDelivery = WebhookDelivery & { url: string; secret: string; failingSince: string | null };

/**
 * Leases a due, pending delivery of an enabled endpoint for one attempt; null when there is nothing to do
 * (delivered, failed, not due, leased by another consumer, or its endpoint is gone or disabled).
 */
export async function claimDelivery(db: AccountSql, id: string, leaseSeconds: number): Promise<ClaimedDelivery | null> {
  const now = Date.now();
  const row = await db
    .prepare(
      `UPDATE webhook_deliveries SET lease_until = ?2
       WHERE id = ?1 AND status = 'pending' AND due_at <= ?4 AND (lease_until IS NULL OR lease_until < ?3)
         AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = endpoint_id AND w.enabled = 1)
       RETURNING *, (SELECT url FROM webhook_endpoints w WHERE w.id = endpoint_id) AS url,
         (SELECT secret FROM webhook_endpoints w WHERE w.id = endpoint_id) AS secret,
         (SELECT failing_since FROM webhook_endpoints w WHERE w.id = endpoint_id) AS failing_since`,
    )
    .bind(id, now + leaseSeconds * 1000, now, now + 5_000)
    .first<DeliveryRow & { url: string; secret: string; failing_since: string | null }>();
  return row ? { ...toDelivery(row), url: row.url, secret: row.secret, failingSince: row.failing_since } : null;
}

export type DeliveryAttempt = {
  delivery: ClaimedDelivery;
  /** HTTP status, when the endpoint answered. */
  httpStatus: number | null;
  error: string | null;
  /** The start of the answer's body. */
  response: string | null;
  outcome: DeliveryStatus;
  /** When a pending delivery is due again. */
  retryAt: Date | null;
  /** Disables the endpoint with this reason (it has failed every delivery for too long). */
  disableReason: string | null;
};

/** Records one attempt, and the endpoint's failure record (cleared by a success), in one transaction. */
export async function recordDeliveryAttempt(db: AccountSql, attempt: DeliveryAttempt): Promise<void> {
  const now = new Date();
  const at = now.getTime();
  const { delivery } = attempt;
  await db.batch([
    db
      .prepare(
        `UPDATE webhook_deliveries SET status = ?2, attempts = attempts + 1, last_status = ?3, last_error = ?4,
           last_response = ?7, due_at = CASE WHEN ?2 = 'pending' THEN COALESCE(?5, due_at) END,
           lease_until = NULL, updated_at = ?6
         WHERE id = ?1 AND status = 'pending'`,
      )
      .bind(
        delivery.id,
        attempt.outcome,
        attempt.httpStatus,
        attempt.error,
        attempt.retryAt ? attempt.retryAt.getTime() : null,
        at,
        attempt.response,
      ),
    db
      .prepare(
        `UPDATE webhook_endpoints SET
           failing_since = CASE WHEN ?2 = 'delivered' THEN NULL ELSE COALESCE(failing_since, ?3) END,
           enabled = CASE WHEN ?4 IS NULL THEN enabled ELSE 0 END,
           disabled_reason = COALESCE(?4, disabled_reason)
         WHERE id = ?1`,
      )
      .bind(delivery.endpointId, attempt.outcome, now.toISOString(), attempt.disableReason),
  ]);
}

/**
 * Pending deliveries of enabled endpoints overdue by `graceSeconds` with no live lease: due again now (the
 * account alarm queues them). A disabled endpoint's pending deliveries wait until it is enabled again.
 */
export async function claimOverdueDeliveries(db: AccountSql, graceSeconds: number, limit: number): Promise<string[]> {
  const now = Date.now();
  const rows = await db
    .prepare(
      `UPDATE webhook_deliveries SET due_at = ?1
       WHERE id IN (
         SELECT id FROM webhook_deliveries
         WHERE status = 'pending' AND due_at < ?2 AND (lease_until IS NULL OR lease_until < ?1)
           AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = endpoint_id AND w.enabled = 1)
         ORDER BY due_at LIMIT ?3)
       RETURNING id`,
    )
    .bind(now, now - graceSeconds * 1000, limit)
    .all<{ id: string }>();
  return rows.results.map((r) => r.id);
}
