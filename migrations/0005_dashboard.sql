-- The dashboard (docs/dashboard.md): the people who sign in to an account, their sessions, and what they did.

-- A member signs in to one account's dashboard with a code mailed to `email` (lower-cased; an address may be a
-- member of several accounts). role: owner, admin, developer, viewer (src/dashboard/roles.ts).
-- invited_by: the member who added this one; null when the operator did.
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

-- A signed-in browser. Only the SHA-256 of the cookie's token is kept. `member_id` is the membership the
-- session acts as (an address with several accounts switches between its own memberships).
-- last_seen_at is at most ten minutes behind. A revoked or expired session is refused.
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

-- Who did what in an account: actor is a member's address, or 'operator' for the admin API. action is a
-- dotted name (member.invited, key.created, …); target the id or address acted on; detail JSON.
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

-- The account the dashboard's sign-in codes are sent from: the service signs its own members in with its own
-- backend OTP flow. Its sender is MAIL_FROM unless the operator gives it one.
INSERT INTO accounts (id, name, created_at) VALUES ('acc_postcode', 'postcode dashboard sign-in', '2026-11-26T00:00:00.000Z');
INSERT INTO otp_branding (account_id, product_name, updated_at) VALUES ('acc_postcode', 'postcode', '2026-11-26T00:00:00.000Z');
