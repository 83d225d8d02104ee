-- postcode's control plane in D1: accounts and where their data lives, credentials, settings, sending domains,
-- senders, dashboard members and sessions, the audit log. Each account's mail and everything that grows with it
-- lives in the account's own Durable Object (src/store/account/schema-v1.ts). Timestamps are ISO 8601 UTC
-- strings unless a column says otherwise; every list reads through an index in its own order.

-- Accounts, and where each one's data lives: its own Durable Object (AccountStore), named by the id, placed
-- near `region` or pinned to `jurisdiction` when it is made (`placed_at`: made, and no longer movable). `tag` is
-- the start of the id's random part: email ids carry it, so a bounce finds the account of the email it names.
CREATE TABLE accounts (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  tag           TEXT NOT NULL UNIQUE,
  region        TEXT,
  jurisdiction  TEXT,
  placed_at     TEXT
);
CREATE INDEX accounts_created ON accounts(created_at, id);

-- Credentials. Keys and tokens are stored only as SHA-256 hashes; scopes and IP allowlists are JSON arrays. A
-- key's mode: 'live' sends; 'test' (pc_test_...) runs the pipeline without SMTP. `last_used_at` is at most an
-- hour behind (written off the request path).
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

CREATE TABLE otp_tokens (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  token_hash   TEXT NOT NULL UNIQUE,
  secret_hash  TEXT NOT NULL,
  allowed_ips  TEXT NOT NULL DEFAULT '[]',
  created_at   TEXT NOT NULL,
  revoked_at   TEXT
, last_used_at TEXT);
CREATE INDEX otp_tokens_account_created ON otp_tokens(account_id, created_at, id);

-- The operator's settings (one row): freeze mode, and the daily warm-up allowance of each account.
CREATE TABLE settings (
  id               INTEGER PRIMARY KEY CHECK (id = 1),
  frozen           INTEGER NOT NULL DEFAULT 0,
  daily_allowance  INTEGER,
  updated_at       TEXT NOT NULL
);
INSERT INTO settings (id, frozen, daily_allowance, updated_at) VALUES (1, 0, NULL, '1970-01-01T00:00:00.000Z');
-- Accounts whose object holds mail back in freeze mode: an unfreeze wakes them (the objects add and remove
-- themselves; each also looks again every minute on its own).
CREATE TABLE held_mail (
  account_id  TEXT PRIMARY KEY REFERENCES accounts(id),
  since       TEXT NOT NULL
);

-- Sending domains and their DKIM selectors; a verified name belongs to one account.
CREATE TABLE domains (
  id                  TEXT PRIMARY KEY,
  account_id          TEXT NOT NULL REFERENCES accounts(id),
  name                TEXT NOT NULL,
  status              TEXT NOT NULL DEFAULT 'pending',
  return_path_status  TEXT NOT NULL DEFAULT 'pending',
  spf_status          TEXT NOT NULL DEFAULT 'pending',
  dmarc_status        TEXT NOT NULL DEFAULT 'pending',
  checks              INTEGER NOT NULL DEFAULT 0,
  next_check_at       INTEGER,
  checked_at          TEXT,
  verified_at         TEXT,
  created_at          TEXT NOT NULL
);
CREATE INDEX domains_account_created ON domains(account_id, created_at, id);
CREATE UNIQUE INDEX domains_account_name ON domains(account_id, name);
CREATE UNIQUE INDEX domains_held_name ON domains(name) WHERE status IN ('verified', 'partially_verified');
CREATE INDEX domains_due ON domains(next_check_at) WHERE next_check_at IS NOT NULL;

CREATE TABLE dkim_selectors (
  domain_id           TEXT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
  selector            TEXT NOT NULL,
  public_key          TEXT NOT NULL,
  sealed_private_key  TEXT NOT NULL,
  status              TEXT NOT NULL DEFAULT 'pending',
  created_at          TEXT NOT NULL,
  verified_at         TEXT,
  retires_at          INTEGER,
  PRIMARY KEY (domain_id, selector)
) WITHOUT ROWID;

-- Sender identities; a pending one waits for its confirmation token (hashed).
CREATE TABLE senders (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  email       TEXT NOT NULL,
  name        TEXT,
  verified    INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL
, confirm_token_hash TEXT, confirm_expires_at INTEGER);
CREATE INDEX senders_account_created ON senders(account_id, created_at, id);
CREATE UNIQUE INDEX senders_confirm_token ON senders(confirm_token_hash) WHERE confirm_token_hash IS NOT NULL;

-- The dashboard: members, their sign-in sessions (tokens hashed), and the audit log.
CREATE TABLE members (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  email       TEXT NOT NULL,
  role        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  invited_by  TEXT
);
CREATE UNIQUE INDEX members_account_email ON members(account_id, email);
CREATE INDEX members_email ON members(email);

CREATE TABLE dashboard_sessions (
  id            TEXT PRIMARY KEY,
  token_hash    TEXT NOT NULL UNIQUE,
  email         TEXT NOT NULL,
  member_id     TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL,
  revoked_at    TEXT,
  user_agent    TEXT,
  ip            TEXT
);
CREATE INDEX dashboard_sessions_email ON dashboard_sessions(email, created_at);
CREATE INDEX dashboard_sessions_member ON dashboard_sessions(member_id);

CREATE TABLE audit_log (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  actor       TEXT NOT NULL,
  action      TEXT NOT NULL,
  target      TEXT,
  detail      TEXT,
  created_at  TEXT NOT NULL
);
CREATE INDEX audit_log_account_created ON audit_log(account_id, created_at, id);
