-- Idempotency keys are per account and per key mode: a test key and a live key never share one.
CREATE TABLE idempotency_records_by_mode (
  account_id       TEXT NOT NULL,
  test             INTEGER NOT NULL,
  idem_key         TEXT NOT NULL,
  request_hash     TEXT NOT NULL,
  claim_id         TEXT,
  response_status  INTEGER,
  response_body    TEXT,
  created_at       TEXT NOT NULL,
  PRIMARY KEY (account_id, test, idem_key)
);

-- An existing record takes the mode of the email its stored response names (one email, or the first of a
-- batch); a record without one (a request still running) is dropped rather than guessed.
INSERT INTO idempotency_records_by_mode
  (account_id, test, idem_key, request_hash, claim_id, response_status, response_body, created_at)
SELECT r.account_id, e.test, r.idem_key, r.request_hash, r.claim_id, r.response_status, r.response_body, r.created_at
FROM idempotency_records r
JOIN emails e ON e.account_id = r.account_id AND e.id = COALESCE(
  json_extract(r.response_body, '$.data.id'), json_extract(r.response_body, '$.data[0].id'))
WHERE json_valid(r.response_body);

DROP TABLE idempotency_records;
ALTER TABLE idempotency_records_by_mode RENAME TO idempotency_records;
