// Version 3 of an account's database: inbound routes, what the account does with mail to its receiving addresses.
// `local_part` is the pattern's local part, lower-cased: `support` (exact), `support+*` (its sub-addresses) or `*`.
export const SCHEMA_V3 = `
CREATE TABLE inbound_routes (
  id             TEXT PRIMARY KEY,
  account_id     TEXT NOT NULL,
  domain         TEXT NOT NULL,
  local_part     TEXT NOT NULL,
  action         TEXT NOT NULL,
  reject_reason  TEXT,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  UNIQUE (account_id, domain, local_part)
);
CREATE INDEX inbound_routes_created ON inbound_routes(account_id, created_at, id);
`;
