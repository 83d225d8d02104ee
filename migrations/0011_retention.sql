-- Retention (RETENTION_DAYS): the scheduled handler finds what has expired through these indexes, oldest
-- first, without scanning a table. Each partial index's WHERE is repeated word for word by its query in
-- src/db/retention.ts (SQLite uses a partial index only when the query states its condition).

-- Emails in a final state, by the time they reached it (their row changes no more after that).
CREATE INDEX emails_final_updated ON emails(updated_at) WHERE status IN ('SENT', 'FAILED', 'CANCELED', 'SUPPRESSED');
-- Webhook deliveries that are settled, by the time of their last attempt.
CREATE INDEX webhook_deliveries_settled ON webhook_deliveries(updated_at) WHERE status IN ('delivered', 'failed');
CREATE INDEX otp_verifications_verified ON otp_verifications(verified_at);
-- Idempotency records older than 24 h are dead (a new request with the key replaces them).
CREATE INDEX idempotency_records_created ON idempotency_records(created_at);
