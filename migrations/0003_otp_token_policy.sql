-- A public OTP token's send policy (opt-in): a cap on codes per recipient domain per hour (null: none), and
-- whether its sends refuse disposable-address domains and sub-addresses (`a+tag@`).
ALTER TABLE otp_tokens ADD COLUMN domain_sends_per_hour INTEGER;
ALTER TABLE otp_tokens ADD COLUMN block_disposable INTEGER NOT NULL DEFAULT 0;
ALTER TABLE otp_tokens ADD COLUMN block_subaddresses INTEGER NOT NULL DEFAULT 0;
