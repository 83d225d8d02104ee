-- One row per successful OTP verification (never the code). Channel: instant (also the legacy alias),
-- backend or email_verification.
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
