-- postcode's schema. Timestamps are ISO 8601 UTC strings (they sort lexicographically). Every list reads
-- through an index in its own order; the counters at the end keep the lists' `total` without a scan.

-- Accounts and their credentials. Keys and tokens are stored only as SHA-256 hashes; scopes and IP
-- allowlists are JSON arrays. A key's mode: 'live' sends; 'test' (pc_test_...) runs the pipeline without
-- SMTP. `last_used_at` is at most an hour behind (written off the request path).
CREATE TABLE accounts (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
CREATE INDEX accounts_created ON accounts(created_at, id);

CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  name          TEXT,
  key_hash      TEXT NOT NULL UNIQUE,
  scopes        TEXT NOT NULL,
  mode          TEXT NOT NULL DEFAULT 'live',
  created_at    TEXT NOT NULL,
  revoked_at    TEXT,
  last_used_at  TEXT
);
CREATE INDEX api_keys_account_created ON api_keys(account_id, created_at, id);

-- Public OTP tokens (browser use) with their analytics secret and IP allowlist.
CREATE TABLE otp_tokens (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  token_hash   TEXT NOT NULL UNIQUE,
  secret_hash  TEXT NOT NULL,
  allowed_ips  TEXT NOT NULL DEFAULT '[]',
  created_at   TEXT NOT NULL,
  revoked_at   TEXT
);
CREATE INDEX otp_tokens_account_created ON otp_tokens(account_id, created_at, id);

-- Sender identities an account may send from.
CREATE TABLE senders (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  email       TEXT NOT NULL,
  name        TEXT,
  verified    INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL
);
CREATE INDEX senders_account_created ON senders(account_id, created_at, id);

CREATE TABLE templates (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  name        TEXT NOT NULL,
  subject     TEXT NOT NULL,
  html_body   TEXT NOT NULL DEFAULT '',
  text_body   TEXT NOT NULL DEFAULT '',
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX templates_account ON templates(account_id, updated_at);

-- The look of OTP mail and the hosted verify page (set through the operator API); every field optional.
CREATE TABLE otp_branding (
  account_id     TEXT PRIMARY KEY REFERENCES accounts(id),
  product_name   TEXT,
  logo_url       TEXT,
  accent_color   TEXT,
  support_email  TEXT,
  updated_at     TEXT NOT NULL
);

-- The send log. Content is rendered at accept time so the consumer sends exactly what was accepted; the
-- body (html and text) is in R2 under the email's id (src/mail/bodies.ts), never in the row.
-- status: SCHEDULED (waits for scheduled_at), QUEUED, SENT, FAILED, SUPPRESSED, CANCELED.
-- held = 1: accepted while frozen, waiting for the operator to unfreeze (no queue message exists).
-- lease_until/lease_owner: the consumer sending the email (stops double sends when a queue message is
-- delivered twice at once); due_at: when it is next due for an attempt (its creation, its next retry, or
-- the time the sweep last queued it; the scheduled handler queues again what is overdue).
CREATE TABLE emails (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  template_id   TEXT,
  sender_id     TEXT,
  from_email    TEXT NOT NULL,
  from_name     TEXT,
  subject       TEXT NOT NULL,
  priority      TEXT NOT NULL DEFAULT 'NORMAL',
  status        TEXT NOT NULL DEFAULT 'QUEUED',
  message_id    TEXT NOT NULL,
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_reply    TEXT,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  sent_at       TEXT,
  held          INTEGER NOT NULL DEFAULT 0,
  lease_until   TEXT,
  lease_owner   TEXT,
  due_at        TEXT,
  scheduled_at  TEXT,
  reply_to      TEXT NOT NULL DEFAULT '[]',
  headers       TEXT NOT NULL DEFAULT '{}',
  tags          TEXT NOT NULL DEFAULT '[]',
  test          INTEGER NOT NULL DEFAULT 0
);
-- The send log, whole or by status: newest first within an account's mode.
CREATE INDEX emails_log ON emails(account_id, test, created_at DESC, id DESC);
CREATE INDEX emails_log_status ON emails(account_id, test, status, created_at DESC, id DESC);
-- The sweeps and retention, each through its own partial index (named with INDEXED BY in src/db; a partial
-- index is used only when the query states its condition word for word).
CREATE INDEX emails_held ON emails(held) WHERE held = 1;
CREATE INDEX emails_due ON emails(due_at) WHERE status = 'QUEUED';
CREATE INDEX emails_scheduled ON emails(due_at) WHERE status = 'SCHEDULED';
CREATE INDEX emails_lease_owner ON emails(lease_owner) WHERE lease_owner IS NOT NULL;
-- Emails in a final state, by the time they reached it (their row changes no more after that).
CREATE INDEX emails_final_updated ON emails(updated_at) WHERE status IN ('SENT', 'FAILED', 'CANCELED', 'SUPPRESSED');

-- An email's recipients, timeline, tags and attachments are read and deleted by email: clustered by it
-- (WITHOUT ROWID), they need no second copy of their key in an index.
-- Each recipient's own outcome: QUEUED (not yet answered, or deferred with a 4xx), SENT, FAILED,
-- SUPPRESSED; kind 'to', 'cc' or 'bcc'. `canonical` is the mailbox's one spelling (src/mail/address.ts),
-- used against the suppression list and by the `to` filter (a customer's few emails).
CREATE TABLE email_recipients (
  email_id   TEXT NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
  position   INTEGER NOT NULL,
  address    TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT 'QUEUED',
  reply      TEXT,
  canonical  TEXT,
  kind       TEXT NOT NULL DEFAULT 'to',
  PRIMARY KEY (email_id, position)
) WITHOUT ROWID;
CREATE INDEX email_recipients_canonical ON email_recipients(canonical, email_id);

-- The timeline of an email (the detail's `events`), in order within the email.
CREATE TABLE email_events (
  email_id  TEXT NOT NULL,
  seq       INTEGER NOT NULL,
  type      TEXT NOT NULL,
  at        TEXT NOT NULL,
  detail    TEXT,
  PRIMARY KEY (email_id, seq)
) WITHOUT ROWID;

-- The `tag` filter: tags carry their email's account, mode and time (which never change) and its status
-- (kept by a trigger below), so that a tag with a status is answered from the index alone.
CREATE TABLE email_tags (
  email_id    TEXT NOT NULL,
  name        TEXT NOT NULL,
  value       TEXT NOT NULL,
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  created_at  TEXT NOT NULL,
  status      TEXT NOT NULL,
  PRIMARY KEY (email_id, name)
) WITHOUT ROWID;
CREATE INDEX email_tags_log ON email_tags(account_id, test, name, value, created_at DESC, email_id DESC, status);
CREATE TRIGGER emails_status_to_tags AFTER UPDATE OF status ON emails WHEN old.status <> new.status BEGIN
  UPDATE email_tags SET status = new.status WHERE email_id = new.id;
END;

-- Attachment metadata; the bytes live in R2 under r2_key.
CREATE TABLE email_attachments (
  email_id      TEXT NOT NULL,
  position      INTEGER NOT NULL,
  filename      TEXT NOT NULL,
  content_type  TEXT NOT NULL,
  content_id    TEXT,
  size          INTEGER NOT NULL,
  r2_key        TEXT NOT NULL,
  PRIMARY KEY (email_id, position)
);

-- Addresses an account no longer sends to (canonical form); source 'bounce' (a 5xx refusal) or 'manual'.
CREATE TABLE suppressions (
  account_id  TEXT NOT NULL,
  email       TEXT NOT NULL,
  reason      TEXT,
  source      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (account_id, email)
);
CREATE INDEX suppressions_account_created ON suppressions(account_id, created_at DESC, email);

-- Webhook endpoints per account. `secret` (whsec_…) signs deliveries, so it is kept as issued (it is shown
-- to the account once); `events` is a JSON array of event types. `failing_since`: the first failed
-- delivery since the last success; an endpoint failing for WEBHOOK_DISABLE_AFTER_DAYS is disabled with
-- `disabled_reason`.
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
-- Retention: settled deliveries by the time of their last attempt.
CREATE INDEX webhook_deliveries_settled ON webhook_deliveries(updated_at) WHERE status IN ('delivered', 'failed');

-- One row per successful OTP verification (never the code). Channel: instant (also the legacy alias),
-- backend or email_verification. A session is verified once, so its row is unique: a row that had to go
-- through the queue (D1 failed during the verify) is written idempotently.
CREATE TABLE otp_verifications (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  channel      TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  email        TEXT NOT NULL,
  sent_at      TEXT NOT NULL,
  verified_at  TEXT NOT NULL
);
CREATE INDEX otp_verifications_list ON otp_verifications(account_id, channel, verified_at DESC, id DESC);
CREATE UNIQUE INDEX otp_verifications_session ON otp_verifications(session_id);
CREATE INDEX otp_verifications_verified ON otp_verifications(verified_at);

-- Idempotency-Key records (24 h), per account and key mode: the first response is replayed for the same
-- key and body; `claim_id` names the request that inserted the row.
CREATE TABLE idempotency_records (
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
CREATE INDEX idempotency_records_created ON idempotency_records(created_at);

-- Operator settings: one row.
CREATE TABLE settings (
  id               INTEGER PRIMARY KEY CHECK (id = 1),
  frozen           INTEGER NOT NULL DEFAULT 0,
  daily_allowance  INTEGER,
  updated_at       TEXT NOT NULL
);
INSERT INTO settings (id, frozen, daily_allowance, updated_at) VALUES (1, 0, NULL, '1970-01-01T00:00:00.000Z');

-- Recipients accepted per UTC day, for the warm-up allowance.
CREATE TABLE daily_usage (
  day         TEXT PRIMARY KEY,
  recipients  INTEGER NOT NULL
);

-- Counters kept by triggers in the same transaction as the rows they count, so that retention's deletions
-- and every status change keep them exact. How many emails an account's mode has in each status:
CREATE TABLE email_counts (
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  status      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (account_id, test, status)
) WITHOUT ROWID;
CREATE TRIGGER emails_count_insert AFTER INSERT ON emails BEGIN
  INSERT INTO email_counts (account_id, test, status, n) VALUES (new.account_id, new.test, new.status, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER emails_count_status AFTER UPDATE OF status ON emails WHEN old.status <> new.status BEGIN
  UPDATE email_counts SET n = n - 1 WHERE account_id = old.account_id AND test = old.test AND status = old.status;
  INSERT INTO email_counts (account_id, test, status, n) VALUES (new.account_id, new.test, new.status, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER emails_count_delete AFTER DELETE ON emails BEGIN
  UPDATE email_counts SET n = n - 1 WHERE account_id = old.account_id AND test = old.test AND status = old.status;
END;

-- How many emails of an account's mode carry a tag, per status.
CREATE TABLE tag_counts (
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  name        TEXT NOT NULL,
  value       TEXT NOT NULL,
  status      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (account_id, test, name, value, status)
) WITHOUT ROWID;
CREATE TRIGGER email_tags_count_insert AFTER INSERT ON email_tags BEGIN
  INSERT INTO tag_counts (account_id, test, name, value, status, n)
    VALUES (new.account_id, new.test, new.name, new.value, new.status, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER email_tags_count_status AFTER UPDATE OF status ON email_tags WHEN old.status <> new.status BEGIN
  UPDATE tag_counts SET n = n - 1 WHERE account_id = old.account_id AND test = old.test AND name = old.name
    AND value = old.value AND status = old.status;
  INSERT INTO tag_counts (account_id, test, name, value, status, n)
    VALUES (new.account_id, new.test, new.name, new.value, new.status, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER email_tags_count_delete AFTER DELETE ON email_tags BEGIN
  UPDATE tag_counts SET n = n - 1 WHERE account_id = old.account_id AND test = old.test AND name = old.name
    AND value = old.value AND status = old.status;
END;

-- How many rows the other growing lists hold: an account's suppressions, an endpoint's deliveries.
CREATE TABLE list_counts (
  list      TEXT NOT NULL,
  owner_id  TEXT NOT NULL,
  n         INTEGER NOT NULL,
  PRIMARY KEY (list, owner_id)
) WITHOUT ROWID;
CREATE TRIGGER suppressions_count_insert AFTER INSERT ON suppressions BEGIN
  INSERT INTO list_counts (list, owner_id, n) VALUES ('suppressions', new.account_id, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER suppressions_count_delete AFTER DELETE ON suppressions BEGIN
  UPDATE list_counts SET n = n - 1 WHERE list = 'suppressions' AND owner_id = old.account_id;
END;
CREATE TRIGGER webhook_deliveries_count_insert AFTER INSERT ON webhook_deliveries BEGIN
  INSERT INTO list_counts (list, owner_id, n) VALUES ('webhook_deliveries', new.endpoint_id, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER webhook_deliveries_count_delete AFTER DELETE ON webhook_deliveries BEGIN
  UPDATE list_counts SET n = n - 1 WHERE list = 'webhook_deliveries' AND owner_id = old.endpoint_id;
END;
