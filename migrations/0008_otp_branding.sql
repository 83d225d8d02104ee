-- Per-account look of OTP mail and the hosted verify page (set through the operator API).
-- Every field is optional: without one, mail and page look as they did before branding.
CREATE TABLE otp_branding (
  account_id     TEXT PRIMARY KEY REFERENCES accounts(id),
  product_name   TEXT,
  logo_url       TEXT,
  accent_color   TEXT,
  support_email  TEXT,
  updated_at     TEXT NOT NULL
);
