-- When each public OTP token was last used (at most an hour behind, like an API key's), for the dashboard.
ALTER TABLE otp_tokens ADD COLUMN last_used_at TEXT;
