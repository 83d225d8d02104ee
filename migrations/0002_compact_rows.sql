-- The tables that grow with the mail (emails and their recipients, timeline and tags, webhook deliveries,
-- OTP history) keep their times as integer milliseconds since the epoch (UTC): 6 bytes in a row or an index
-- entry where ISO text takes 24, in every one of an email's dozen copies of a time. The small tables keep
-- ISO text. Also gone from those rows: what another column already says. An email's Message-ID is
-- `<id@sender's domain>`; a webhook delivery's payload keeps only its `data` (its `type` and `createdAt`
-- are the row's event_type and created_at), its account is its endpoint's, and a settled delivery is due
-- no more (due_at NULL).
--
-- SQLite changes a column's type only by copying the table. An email's recipients are copied with it:
-- dropping a parent table deletes its rows first, and the recipients' ON DELETE CASCADE would follow.
-- The counters' triggers go first so that nothing here counts twice.

DROP TRIGGER emails_status_to_tags;
DROP TRIGGER emails_count_insert;
DROP TRIGGER emails_count_status;
DROP TRIGGER emails_count_delete;
DROP TRIGGER email_tags_count_insert;
DROP TRIGGER email_tags_count_status;
DROP TRIGGER email_tags_count_delete;
DROP TRIGGER webhook_deliveries_count_insert;
DROP TRIGGER webhook_deliveries_count_delete;

CREATE TABLE emails_new (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  template_id   TEXT,
  sender_id     TEXT,
  from_email    TEXT NOT NULL,
  from_name     TEXT,
  subject       TEXT NOT NULL,
  priority      TEXT NOT NULL DEFAULT 'NORMAL',
  status        TEXT NOT NULL DEFAULT 'QUEUED',
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_reply    TEXT,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  sent_at       INTEGER,
  held          INTEGER NOT NULL DEFAULT 0,
  lease_until   INTEGER,
  lease_owner   TEXT,
  due_at        INTEGER,
  scheduled_at  INTEGER,
  reply_to      TEXT NOT NULL DEFAULT '[]',
  headers       TEXT NOT NULL DEFAULT '{}',
  tags          TEXT NOT NULL DEFAULT '[]',
  test          INTEGER NOT NULL DEFAULT 0
);
INSERT INTO emails_new (id, account_id, template_id, sender_id, from_email, from_name, subject, priority, status,
  attempts, last_reply, created_at, updated_at, sent_at, held, lease_until, lease_owner, due_at, scheduled_at, reply_to,
  headers, tags, test)
SELECT id, account_id, template_id, sender_id, from_email, from_name, subject, priority, status, attempts, last_reply,
  CAST(ROUND((julianday(created_at) - 2440587.5) * 86400000) AS INTEGER),
  CAST(ROUND((julianday(updated_at) - 2440587.5) * 86400000) AS INTEGER),
  CAST(ROUND((julianday(sent_at) - 2440587.5) * 86400000) AS INTEGER),
  held,
  CAST(ROUND((julianday(lease_until) - 2440587.5) * 86400000) AS INTEGER),
  lease_owner,
  CAST(ROUND((julianday(due_at) - 2440587.5) * 86400000) AS INTEGER),
  CAST(ROUND((julianday(scheduled_at) - 2440587.5) * 86400000) AS INTEGER),
  reply_to, headers, tags, test
FROM emails;

CREATE TABLE email_recipients_new (
  email_id   TEXT NOT NULL REFERENCES emails_new(id) ON DELETE CASCADE,
  position   INTEGER NOT NULL,
  address    TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT 'QUEUED',
  reply      TEXT,
  canonical  TEXT,
  kind       TEXT NOT NULL DEFAULT 'to',
  PRIMARY KEY (email_id, position)
) WITHOUT ROWID;
INSERT INTO email_recipients_new SELECT email_id, position, address, status, reply, canonical, kind FROM email_recipients;

CREATE TABLE email_events_new (
  email_id  TEXT NOT NULL,
  seq       INTEGER NOT NULL,
  type      TEXT NOT NULL,
  at        INTEGER NOT NULL,
  detail    TEXT,
  PRIMARY KEY (email_id, seq)
) WITHOUT ROWID;
INSERT INTO email_events_new
SELECT email_id, seq, type, CAST(ROUND((julianday(at) - 2440587.5) * 86400000) AS INTEGER), detail FROM email_events;

CREATE TABLE email_tags_new (
  email_id    TEXT NOT NULL,
  name        TEXT NOT NULL,
  value       TEXT NOT NULL,
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  status      TEXT NOT NULL,
  PRIMARY KEY (email_id, name)
) WITHOUT ROWID;
INSERT INTO email_tags_new
SELECT email_id, name, value, account_id, test, CAST(ROUND((julianday(created_at) - 2440587.5) * 86400000) AS INTEGER),
  status
FROM email_tags;

CREATE TABLE webhook_deliveries_new (
  id           TEXT PRIMARY KEY,
  endpoint_id  TEXT NOT NULL,
  event_type   TEXT NOT NULL,
  data         TEXT NOT NULL,
  status       TEXT NOT NULL DEFAULT 'pending',
  attempts     INTEGER NOT NULL DEFAULT 0,
  last_status  INTEGER,
  last_error   TEXT,
  due_at       INTEGER,
  lease_until  INTEGER,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
-- The payload is `{"type":…,"createdAt":…,"data":<data>}`: its data is what follows the first `,"data":`.
INSERT INTO webhook_deliveries_new
SELECT id, endpoint_id, event_type,
  substr(payload, instr(payload, ',"data":') + 8, length(payload) - instr(payload, ',"data":') - 8),
  status, attempts, last_status, last_error,
  CASE WHEN status = 'pending' THEN CAST(ROUND((julianday(due_at) - 2440587.5) * 86400000) AS INTEGER) END,
  CAST(ROUND((julianday(lease_until) - 2440587.5) * 86400000) AS INTEGER),
  CAST(ROUND((julianday(created_at) - 2440587.5) * 86400000) AS INTEGER),
  CAST(ROUND((julianday(updated_at) - 2440587.5) * 86400000) AS INTEGER)
FROM webhook_deliveries;

CREATE TABLE otp_verifications_new (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  channel      TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  email        TEXT NOT NULL,
  sent_at      INTEGER NOT NULL,
  verified_at  INTEGER NOT NULL
);
INSERT INTO otp_verifications_new
SELECT id, account_id, channel, session_id, email,
  CAST(ROUND((julianday(sent_at) - 2440587.5) * 86400000) AS INTEGER),
  CAST(ROUND((julianday(verified_at) - 2440587.5) * 86400000) AS INTEGER)
FROM otp_verifications;

DROP TABLE email_recipients;
DROP TABLE emails;
DROP TABLE email_events;
DROP TABLE email_tags;
DROP TABLE webhook_deliveries;
DROP TABLE otp_verifications;
ALTER TABLE emails_new RENAME TO emails;
ALTER TABLE email_recipients_new RENAME TO email_recipients;
ALTER TABLE email_events_new RENAME TO email_events;
ALTER TABLE email_tags_new RENAME TO email_tags;
ALTER TABLE webhook_deliveries_new RENAME TO webhook_deliveries;
ALTER TABLE otp_verifications_new RENAME TO otp_verifications;

-- The indexes and triggers of migrations/0001_init.sql (what each is for is said there), on the new tables.
CREATE INDEX emails_log ON emails(account_id, test, created_at DESC, id DESC);
CREATE INDEX emails_log_status ON emails(account_id, test, status, created_at DESC, id DESC);
CREATE INDEX emails_held ON emails(held) WHERE held = 1;
CREATE INDEX emails_due ON emails(due_at) WHERE status = 'QUEUED';
CREATE INDEX emails_scheduled ON emails(due_at) WHERE status = 'SCHEDULED';
CREATE INDEX emails_lease_owner ON emails(lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX emails_final_updated ON emails(updated_at) WHERE status IN ('SENT', 'FAILED', 'CANCELED', 'SUPPRESSED');
CREATE INDEX email_recipients_canonical ON email_recipients(canonical, email_id);
CREATE INDEX email_tags_log ON email_tags(account_id, test, name, value, created_at DESC, email_id DESC, status);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(due_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_settled ON webhook_deliveries(updated_at) WHERE status IN ('delivered', 'failed');
CREATE INDEX otp_verifications_list ON otp_verifications(account_id, channel, verified_at DESC, id DESC);
CREATE UNIQUE INDEX otp_verifications_session ON otp_verifications(session_id);
CREATE INDEX otp_verifications_verified ON otp_verifications(verified_at);

CREATE TRIGGER emails_status_to_tags AFTER UPDATE OF status ON emails WHEN old.status <> new.status BEGIN
  UPDATE email_tags SET status = new.status WHERE email_id = new.id;
END;
CREATE TRIGGER emails_count_insert AFTER INSERT ON emails BEGIN
  INSERT INTO email_counts (account_id, test, status, n) VALUES (new.account_id, new.test, new.status, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER emails_count_status AFTER UPDATE OF status ON emails WHEN old.status <> new.status BEGIN
  UPDATE email_counts SET n = n - 1 WHERE account_id = old.account_id AND test = old.test AND status = old.status;
  INSERT INTO email_counts (account_id, test, status, n) VALUES (new.account_id, new.test, new.status, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER emails_count_delete AFTER DELETE ON emails BEGIN
  UPDATE email_counts SET n = n - 1 WHERE account_id = old.account_id AND test = old.test AND status = old.status;
END;
CREATE TRIGGER email_tags_count_insert AFTER INSERT ON email_tags BEGIN
  INSERT INTO tag_counts (account_id, test, name, value, status, n)
    VALUES (new.account_id, new.test, new.name, new.value, new.status, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER email_tags_count_status AFTER UPDATE OF status ON email_tags WHEN old.status <> new.status BEGIN
  UPDATE tag_counts SET n = n - 1 WHERE account_id = old.account_id AND test = old.test AND name = old.name
    AND value = old.value AND status = old.status;
  INSERT INTO tag_counts (account_id, test, name, value, status, n)
    VALUES (new.account_id, new.test, new.name, new.value, new.status, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER email_tags_count_delete AFTER DELETE ON email_tags BEGIN
  UPDATE tag_counts SET n = n - 1 WHERE account_id = old.account_id AND test = old.test AND name = old.name
    AND value = old.value AND status = old.status;
END;
CREATE TRIGGER webhook_deliveries_count_insert AFTER INSERT ON webhook_deliveries BEGIN
  INSERT INTO list_counts (list, owner_id, n) VALUES ('webhook_deliveries', new.endpoint_id, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER webhook_deliveries_count_delete AFTER DELETE ON webhook_deliveries BEGIN
  UPDATE list_counts SET n = n - 1 WHERE list = 'webhook_deliveries' AND owner_id = old.endpoint_id;
END;
