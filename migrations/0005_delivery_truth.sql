-- Delivery truth: the outbox sweep, per-recipient outcomes, the suppression list and each email's timeline.

-- When the email is next due for a delivery attempt: its creation, the time of its next retry, or the
-- time the sweep last queued it. The scheduled handler queues again what is overdue (src/db/outbox.ts).
ALTER TABLE emails ADD COLUMN due_at TEXT;
UPDATE emails SET due_at = updated_at WHERE status = 'QUEUED';
CREATE INDEX emails_due ON emails(due_at) WHERE status = 'QUEUED';
-- A consumer renews the leases of the rest of its batch after each message (src/db/delivery.ts).
CREATE INDEX emails_lease_owner ON emails(lease_owner) WHERE lease_owner IS NOT NULL;

-- Each recipient's own outcome: QUEUED (not yet answered, or deferred with a 4xx), SENT, FAILED, SUPPRESSED.
-- `canonical` is the mailbox's one spelling (src/mail/address.ts), used against the suppression list.
ALTER TABLE email_recipients ADD COLUMN status TEXT NOT NULL DEFAULT 'QUEUED';
ALTER TABLE email_recipients ADD COLUMN reply TEXT;
ALTER TABLE email_recipients ADD COLUMN canonical TEXT;
UPDATE email_recipients SET canonical = lower(address);
UPDATE email_recipients SET status = (SELECT CASE e.status WHEN 'QUEUED' THEN 'QUEUED' ELSE e.status END
  FROM emails e WHERE e.id = email_recipients.email_id);

-- The timeline of an email (GET /api/v1/emails/{emailId} `events`).
CREATE TABLE email_events (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  email_id  TEXT NOT NULL,
  type      TEXT NOT NULL,
  at        TEXT NOT NULL,
  detail    TEXT
);
CREATE INDEX email_events_email ON email_events(email_id, seq);

-- Addresses an account no longer sends to (canonical form); source 'bounce' (a 5xx refusal) or 'manual'.
CREATE TABLE suppressions (
  account_id  TEXT NOT NULL,
  email       TEXT NOT NULL,
  reason      TEXT,
  source      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (account_id, email)
);
CREATE INDEX suppressions_account_created ON suppressions(account_id, created_at DESC, email);
CREATE INDEX email_recipients_canonical ON email_recipients(canonical, email_id);
