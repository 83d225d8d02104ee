-- Delivery guarantees: freeze holds, delivery leases, idempotency claims, daily warm-up usage.

-- held = 1: accepted while frozen, waiting for the operator to unfreeze (no queue message exists).
ALTER TABLE emails ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
-- A consumer that is sending this email holds the lease until then (ISO time); stops double sends
-- when a queue message is delivered twice at once.
ALTER TABLE emails ADD COLUMN lease_until TEXT;
ALTER TABLE emails ADD COLUMN lease_owner TEXT;
CREATE INDEX emails_held ON emails(held) WHERE held = 1;

-- Which request claimed an Idempotency-Key (the one that inserted the row).
ALTER TABLE idempotency_records ADD COLUMN claim_id TEXT;

-- Recipients accepted per UTC day, for the warm-up allowance.
CREATE TABLE daily_usage (
  day         TEXT PRIMARY KEY,
  recipients  INTEGER NOT NULL
);
