-- Events and signed webhooks: endpoints per account and the delivery log.

-- `secret` (whsec_…) signs deliveries, so it is kept as issued (it is shown to the account once).
-- `events` is a JSON array of event types. `failing_since`: the first failed delivery since the last
-- success; an endpoint failing for WEBHOOK_DISABLE_AFTER_DAYS is disabled with `disabled_reason`.
CREATE TABLE webhook_endpoints (
  id               TEXT PRIMARY KEY,
  account_id       TEXT NOT NULL REFERENCES accounts(id),
  url              TEXT NOT NULL,
  events           TEXT NOT NULL,
  description      TEXT,
  secret           TEXT NOT NULL,
  enabled          INTEGER NOT NULL DEFAULT 1,
  disabled_reason  TEXT,
  failing_since    TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints(account_id, created_at);

-- One row per event and endpoint. `id` is the stable `webhook-id` header across retries. Written in the
-- transaction of the fact the event records; the queue is the fast path, the sweep the safety net
-- (`due_at`, like emails).
CREATE TABLE webhook_deliveries (
  id           TEXT PRIMARY KEY,
  endpoint_id  TEXT NOT NULL,
  account_id   TEXT NOT NULL,
  event_type   TEXT NOT NULL,
  payload      TEXT NOT NULL,
  status       TEXT NOT NULL DEFAULT 'pending',
  attempts     INTEGER NOT NULL DEFAULT 0,
  last_status  INTEGER,
  last_error   TEXT,
  due_at       TEXT NOT NULL,
  lease_until  TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(due_at) WHERE status = 'pending';
