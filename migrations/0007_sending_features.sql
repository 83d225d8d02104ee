-- Issue 14: scheduled sends, cc/bcc/reply-to, tags, custom headers, attachments (in R2), test keys.

-- A key's mode: 'live' sends; 'test' (pc_test_...) runs the pipeline without SMTP.
ALTER TABLE api_keys ADD COLUMN mode TEXT NOT NULL DEFAULT 'live';

-- status may now also be 'SCHEDULED' (waits for scheduled_at) and 'CANCELED'.
ALTER TABLE emails ADD COLUMN scheduled_at TEXT;
ALTER TABLE emails ADD COLUMN reply_to TEXT NOT NULL DEFAULT '[]';
ALTER TABLE emails ADD COLUMN headers TEXT NOT NULL DEFAULT '{}';
ALTER TABLE emails ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE emails ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
CREATE INDEX emails_scheduled ON emails(due_at) WHERE status = 'SCHEDULED';

-- Each recipient is 'to', 'cc' or 'bcc'.
ALTER TABLE email_recipients ADD COLUMN kind TEXT NOT NULL DEFAULT 'to';

-- Tags again, one row each, for the send log's tag=name:value filter.
CREATE TABLE email_tags (
  email_id  TEXT NOT NULL,
  name      TEXT NOT NULL,
  value     TEXT NOT NULL,
  PRIMARY KEY (email_id, name)
);
CREATE INDEX email_tags_lookup ON email_tags(name, value, email_id);

-- Attachment metadata; the bytes live in R2 under r2_key.
CREATE TABLE email_attachments (
  email_id      TEXT NOT NULL,
  position      INTEGER NOT NULL,
  filename      TEXT NOT NULL,
  content_type  TEXT NOT NULL,
  content_id    TEXT,
  size          INTEGER NOT NULL,
  r2_key        TEXT NOT NULL,
  PRIMARY KEY (email_id, position)
);
