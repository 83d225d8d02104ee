-- postcode: initial schema. Timestamps are ISO 8601 UTC strings (they sort lexicographically).

CREATE TABLE accounts (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  created_at  TEXT NOT NULL
);

-- API keys are stored only as SHA-256 hashes; scopes is a JSON array.
CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  name        TEXT,
  key_hash    TEXT NOT NULL UNIQUE,
  scopes      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
);
CREATE INDEX api_keys_account ON api_keys(account_id);

-- Public OTP tokens (browser use) with their analytics secret and IP allowlist (JSON array).
CREATE TABLE otp_tokens (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  token_hash   TEXT NOT NULL UNIQUE,
  secret_hash  TEXT NOT NULL,
  allowed_ips  TEXT NOT NULL DEFAULT '[]',
  created_at   TEXT NOT NULL,
  revoked_at   TEXT
);
CREATE INDEX otp_tokens_account ON otp_tokens(account_id);

-- Verified sender identities an account may send from.
CREATE TABLE senders (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  email       TEXT NOT NULL,
  name        TEXT,
  verified    INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL
);
CREATE INDEX senders_account ON senders(account_id);

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

-- The send log. Content is rendered at queue time so the consumer sends exactly what was accepted.
CREATE TABLE emails (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  template_id  TEXT,
  sender_id    TEXT,
  from_email   TEXT NOT NULL,
  from_name    TEXT,
  subject      TEXT NOT NULL,
  html         TEXT,
  text         TEXT,
  priority     TEXT NOT NULL DEFAULT 'NORMAL',
  status       TEXT NOT NULL DEFAULT 'QUEUED',
  message_id   TEXT NOT NULL,
  attempts     INTEGER NOT NULL DEFAULT 0,
  last_reply   TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  sent_at      TEXT
);
CREATE INDEX emails_account_created ON emails(account_id, created_at DESC, id DESC);
CREATE INDEX emails_status ON emails(status, priority);

CREATE TABLE email_recipients (
  email_id  TEXT NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
  position  INTEGER NOT NULL,
  address   TEXT NOT NULL,
  PRIMARY KEY (email_id, position)
);

-- Idempotency-Key records (24 h): the first response is replayed for the same key and body.
CREATE TABLE idempotency_records (
  account_id       TEXT NOT NULL,
  idem_key         TEXT NOT NULL,
  request_hash     TEXT NOT NULL,
  response_status  INTEGER,
  response_body    TEXT,
  created_at       TEXT NOT NULL,
  PRIMARY KEY (account_id, idem_key)
);

-- Operator settings: one row.
CREATE TABLE settings (
  id               INTEGER PRIMARY KEY CHECK (id = 1),
  frozen           INTEGER NOT NULL DEFAULT 0,
  daily_allowance  INTEGER,
  updated_at       TEXT NOT NULL
);
INSERT INTO settings (id, frozen, daily_allowance, updated_at) VALUES (1, 0, NULL, '1970-01-01T00:00:00.000Z');
