-- When a key was last used, at most an hour behind (written off the request path, see docs/decisions.md).
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;

-- The operator's lists: newest first, ties broken by id.
CREATE INDEX accounts_created ON accounts(created_at, id);
CREATE INDEX api_keys_account_created ON api_keys(account_id, created_at, id);
CREATE INDEX otp_tokens_account_created ON otp_tokens(account_id, created_at, id);
CREATE INDEX senders_account_created ON senders(account_id, created_at, id);
DROP INDEX api_keys_account;
DROP INDEX otp_tokens_account;
DROP INDEX senders_account;
