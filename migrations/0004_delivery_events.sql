-- What happens after the relay: the route each recipient went through, the provider's message id (to match
-- its events), bounces and complaints; suppressions with a reason, the email that caused them and an expiry.

-- `route`: the name of the delivery route that took the recipient (MAIL_ROUTES). `provider_id`: the message
-- id a provider answered for it (Cloudflare Email Service), which its events name. `bounce_type`: hard or
-- soft, for a BOUNCED recipient. `reply` keeps the last diagnostic (the server's refusal, the bounce's).
ALTER TABLE email_recipients ADD COLUMN route TEXT;
ALTER TABLE email_recipients ADD COLUMN provider_id TEXT;
ALTER TABLE email_recipients ADD COLUMN bounce_type TEXT;
CREATE INDEX email_recipients_provider ON email_recipients(provider_id) WHERE provider_id IS NOT NULL;

-- `reason`: hard_bounce, complaint, rcpt_rejected (a 5xx at RCPT TO) or manual; the free text an entry was
-- added with by hand moves to `note`. `email_id`: the email that caused it. `expires_at` (epoch ms): the
-- entry stops blocking from then on (NULL: never).
ALTER TABLE suppressions RENAME COLUMN reason TO note;
ALTER TABLE suppressions ADD COLUMN reason TEXT NOT NULL DEFAULT 'manual';
ALTER TABLE suppressions ADD COLUMN email_id TEXT;
ALTER TABLE suppressions ADD COLUMN expires_at INTEGER;
UPDATE suppressions SET reason = 'rcpt_rejected' WHERE source = 'bounce';

-- DELIVERED and BOUNCED are final states too: retention deletes them like SENT.
DROP INDEX emails_final_updated;
CREATE INDEX emails_final_updated ON emails(updated_at)
  WHERE status IN ('SENT', 'FAILED', 'CANCELED', 'SUPPRESSED', 'DELIVERED', 'BOUNCED');

-- The route of a timeline event where one was involved (sent, failed over, delivered, bounced…).
ALTER TABLE email_events ADD COLUMN route TEXT;
