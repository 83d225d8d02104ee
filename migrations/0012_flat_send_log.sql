-- A data layer whose cost stays flat as an account's mail grows: bodies out of the rows, indexes that
-- answer each send-log filter in order, and counters kept by triggers in the same transactions as the
-- rows they count (the lists' `total` without a scan).

-- Bodies live in R2 (binding BODIES) under body_key. Rows stored before have them inline in html/text;
-- the scheduled handler moves those to R2 a batch at a time, through this index, until it is empty.
ALTER TABLE emails ADD COLUMN body_key TEXT;
CREATE INDEX emails_inline_body ON emails(created_at) WHERE body_key IS NULL AND (html IS NOT NULL OR text IS NOT NULL);

-- The send log, whole or by status: newest first within an account's mode. The sweeps and retention name
-- their own partial indexes, so the index by status alone has nothing left to serve.
DROP INDEX emails_account_created;
DROP INDEX emails_status;
CREATE INDEX emails_log ON emails(account_id, test, created_at DESC, id DESC);
CREATE INDEX emails_log_status ON emails(account_id, test, status, created_at DESC, id DESC);

-- An email's recipients, timeline and tags are read and deleted by email: clustered by it (WITHOUT ROWID),
-- they need no second copy of their key in an index. The `to` filter goes through the recipient's index
-- (a customer's few emails).
CREATE TABLE email_recipients_by_email (
  email_id   TEXT NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
  position   INTEGER NOT NULL,
  address    TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT 'QUEUED',
  reply      TEXT,
  canonical  TEXT,
  kind       TEXT NOT NULL DEFAULT 'to',
  PRIMARY KEY (email_id, position)
) WITHOUT ROWID;
INSERT INTO email_recipients_by_email (email_id, position, address, status, reply, canonical, kind)
  SELECT email_id, position, address, status, reply, canonical, kind FROM email_recipients;
DROP TABLE email_recipients;
ALTER TABLE email_recipients_by_email RENAME TO email_recipients;
CREATE INDEX email_recipients_canonical ON email_recipients(canonical, email_id);

-- Events keep their order within the email (`seq`, numbered per email from now on).
CREATE TABLE email_events_by_email (
  email_id  TEXT NOT NULL,
  seq       INTEGER NOT NULL,
  type      TEXT NOT NULL,
  at        TEXT NOT NULL,
  detail    TEXT,
  PRIMARY KEY (email_id, seq)
) WITHOUT ROWID;
INSERT INTO email_events_by_email (email_id, seq, type, at, detail)
  SELECT email_id, seq, type, at, detail FROM email_events;
DROP TABLE email_events;
ALTER TABLE email_events_by_email RENAME TO email_events;

-- The `tag` filter: tags carry their email's account, mode and time (which never change) and its status
-- (kept by a trigger below), so that a tag with a status is answered from the index alone.
CREATE TABLE email_tags_by_email (
  email_id    TEXT NOT NULL,
  name        TEXT NOT NULL,
  value       TEXT NOT NULL,
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  created_at  TEXT NOT NULL,
  status      TEXT NOT NULL,
  PRIMARY KEY (email_id, name)
) WITHOUT ROWID;
INSERT INTO email_tags_by_email (email_id, name, value, account_id, test, created_at, status)
  SELECT t.email_id, t.name, t.value, e.account_id, e.test, e.created_at, e.status
  FROM email_tags t JOIN emails e ON e.id = t.email_id;
DROP TABLE email_tags;
ALTER TABLE email_tags_by_email RENAME TO email_tags;
CREATE INDEX email_tags_log ON email_tags(account_id, test, name, value, created_at DESC, email_id DESC, status);

CREATE TRIGGER emails_status_to_tags AFTER UPDATE OF status ON emails WHEN old.status <> new.status BEGIN
  UPDATE email_tags SET status = new.status WHERE email_id = new.id;
END;

-- How many emails an account's mode has in each status.
CREATE TABLE email_counts (
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  status      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (account_id, test, status)
) WITHOUT ROWID;
INSERT INTO email_counts (account_id, test, status, n)
  SELECT account_id, test, status, COUNT(*) FROM emails GROUP BY account_id, test, status;

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

-- How many emails of an account's mode carry a tag, per status.
CREATE TABLE tag_counts (
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  name        TEXT NOT NULL,
  value       TEXT NOT NULL,
  status      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (account_id, test, name, value, status)
) WITHOUT ROWID;
INSERT INTO tag_counts (account_id, test, name, value, status, n)
  SELECT account_id, test, name, value, status, COUNT(*) FROM email_tags GROUP BY account_id, test, name, value, status;

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

-- How many rows the other growing lists hold: an account's suppressions, an endpoint's deliveries.
CREATE TABLE list_counts (
  list      TEXT NOT NULL,
  owner_id  TEXT NOT NULL,
  n         INTEGER NOT NULL,
  PRIMARY KEY (list, owner_id)
) WITHOUT ROWID;
INSERT INTO list_counts (list, owner_id, n) SELECT 'suppressions', account_id, COUNT(*) FROM suppressions GROUP BY account_id;
INSERT INTO list_counts (list, owner_id, n)
  SELECT 'webhook_deliveries', endpoint_id, COUNT(*) FROM webhook_deliveries GROUP BY endpoint_id;

CREATE TRIGGER suppressions_count_insert AFTER INSERT ON suppressions BEGIN
  INSERT INTO list_counts (list, owner_id, n) VALUES ('suppressions', new.account_id, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER suppressions_count_delete AFTER DELETE ON suppressions BEGIN
  UPDATE list_counts SET n = n - 1 WHERE list = 'suppressions' AND owner_id = old.account_id;
END;
CREATE TRIGGER webhook_deliveries_count_insert AFTER INSERT ON webhook_deliveries BEGIN
  INSERT INTO list_counts (list, owner_id, n) VALUES ('webhook_deliveries', new.endpoint_id, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER webhook_deliveries_count_delete AFTER DELETE ON webhook_deliveries BEGIN
  UPDATE list_counts SET n = n - 1 WHERE list = 'webhook_deliveries' AND owner_id = old.endpoint_id;
END;
