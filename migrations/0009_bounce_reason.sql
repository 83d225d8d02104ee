-- Why a recipient bounced. `bounce_reason`: one of the reasons of src/mail/bounce-reasons.ts (user_unknown,
-- mailbox_full, blocked, … undetermined) for a BOUNCED recipient, NULL for any other. `bounce_type` may be hard,
-- soft or undetermined; it has no CHECK constraint (migrations/0004_delivery_events.sql), so the
-- column stays as it is.
ALTER TABLE email_recipients ADD COLUMN bounce_reason TEXT;

-- A bounce recorded before reasons were read gave none.
UPDATE email_recipients SET bounce_reason = 'undetermined' WHERE bounce_type IS NOT NULL;

-- The send log's `bounceReason` filter: an account's bounces with one reason, found from the few bounced rows
-- rather than by walking the account's emails.
CREATE INDEX email_recipients_bounce_reason ON email_recipients(bounce_reason, email_id)
  WHERE bounce_reason IS NOT NULL;

-- Metrics: `bounced_sender_problem` counts, in the hour the recipient became BOUNCED, the bounces whose reason is
-- the sending side's problem (SENDER_PROBLEM_REASONS in src/mail/bounce-reasons.ts), apart from `bounced`, which
-- counts them all. The reason is the one the recipient bounced with first: a later hard bounce only ever replaces
-- a soft or undetermined one with a reason that is the address's, never the sender's.
CREATE TRIGGER metric_recipient_bounced_sender_problem AFTER UPDATE OF status ON email_recipients
  WHEN old.status <> 'BOUNCED' AND new.status = 'BOUNCED'
   AND new.bounce_reason IN ('blocked', 'spam_detected', 'auth_failure', 'policy') BEGIN
  INSERT INTO metric_counts (account_id, test, hour, metric, n)
    SELECT e.account_id, e.test, CAST((julianday('now') - 2440587.5) * 24 AS INTEGER) * 3600000,
        'bounced_sender_problem', 1
      FROM emails e WHERE e.id = new.email_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
