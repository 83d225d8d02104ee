-- A public OTP token may require a bot check (Cloudflare Turnstile) on its sends: the widget's site key, and its
-- secret sealed (AES-GCM under a key derived from OTP_PEPPER: Siteverify needs the secret itself, so it cannot be
-- a hash like the token's). Both null when the token requires none.
ALTER TABLE otp_tokens ADD COLUMN turnstile_site_key TEXT;
ALTER TABLE otp_tokens ADD COLUMN turnstile_secret TEXT;
