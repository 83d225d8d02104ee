-- Sending domains with their DKIM keys, and senders a customer confirms by mail.

-- A domain an account sends from. `name` is its ASCII spelling (lower case, punycode). Status: pending →
-- verified (DKIM and return path found) or partially_verified (DKIM only); failed after 72 h without DKIM or
-- when a verified domain's DKIM record disappears. Each record's last seen state is kept for the answer.
-- `next_check_at` (epoch ms) is when the scheduled handler looks again; NULL: never (failed).
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
-- One account at a time may hold a name verified: the second one's verify is refused (409 DOMAIN_TAKEN).
CREATE UNIQUE INDEX domains_held_name ON domains(name) WHERE status IN ('verified', 'partially_verified');
CREATE INDEX domains_due ON domains(next_check_at) WHERE next_check_at IS NOT NULL;

-- A domain's DKIM selectors: the private key sealed (AES-GCM under DKIM_KEY_SECRET), the public key as the
-- record publishes it. Status pending → verified (the record was found) or failed (it disappeared). The newest
-- verified selector signs; one replaced by a rotation keeps signing-capable until `retires_at` (epoch ms).
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

-- A sender an account adds itself is pending until its address confirms: the token's SHA-256 and its expiry
-- (epoch ms) until then. The operator's senders are verified from the start.
ALTER TABLE senders ADD COLUMN confirm_token_hash TEXT;
ALTER TABLE senders ADD COLUMN confirm_expires_at INTEGER;
CREATE UNIQUE INDEX senders_confirm_token ON senders(confirm_token_hash) WHERE confirm_token_hash IS NOT NULL;
