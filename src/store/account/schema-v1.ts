// Version 1 of an account's database (src/store/account/schema.ts applies it when the object wakes): the
// account's mail with recipients, timeline, tags and attachment metadata, the counters triggers keep in the same
// transaction as the rows they count, idempotency records, suppressions, templates, webhook endpoints and
// deliveries, OTP history and outcomes, branding, metric counts and the daily usage; the bodies of emails just
// accepted until the alarm has moved them to R2. One account per database;
// rows keep their account_id so that a statement reads the same whichever database it runs on.
export const SCHEMA_V1 = `
CREATE TABLE templates (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL,
  name        TEXT NOT NULL,
  subject     TEXT NOT NULL,
  html_body   TEXT NOT NULL DEFAULT '',
  text_body   TEXT NOT NULL DEFAULT '',
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX templates_account ON templates(account_id, updated_at);
CREATE TABLE otp_branding (
  account_id     TEXT PRIMARY KEY,
  product_name   TEXT,
  logo_url       TEXT,
  accent_color   TEXT,
  support_email  TEXT,
  updated_at     TEXT NOT NULL
);
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
CREATE TABLE suppressions (
  account_id  TEXT NOT NULL,
  email       TEXT NOT NULL,
  note      TEXT,
  source      TEXT NOT NULL,
  created_at  TEXT NOT NULL, reason TEXT NOT NULL DEFAULT 'manual', email_id TEXT, expires_at INTEGER,
  PRIMARY KEY (account_id, email)
);
CREATE INDEX suppressions_account_created ON suppressions(account_id, created_at DESC, email);
CREATE TABLE webhook_endpoints (
  id               TEXT PRIMARY KEY,
  account_id       TEXT NOT NULL,
  url              TEXT NOT NULL,
  events           TEXT NOT NULL,
  description      TEXT,
  secret           TEXT NOT NULL,
  enabled          INTEGER NOT NULL DEFAULT 1,
  disabled_reason  TEXT,
  failing_since    TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints(account_id, created_at);
CREATE TABLE idempotency_records (
  account_id       TEXT NOT NULL,
  test             INTEGER NOT NULL,
  idem_key         TEXT NOT NULL,
  request_hash     TEXT NOT NULL,
  claim_id         TEXT,
  response_status  INTEGER,
  response_body    TEXT,
  created_at       TEXT NOT NULL,
  PRIMARY KEY (account_id, test, idem_key)
);
CREATE INDEX idempotency_records_created ON idempotency_records(created_at);
CREATE TABLE daily_usage (
  day         TEXT PRIMARY KEY,
  recipients  INTEGER NOT NULL
);
CREATE TABLE email_counts (
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  status      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (account_id, test, status)
) WITHOUT ROWID;
CREATE TABLE tag_counts (
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  name        TEXT NOT NULL,
  value       TEXT NOT NULL,
  status      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (account_id, test, name, value, status)
) WITHOUT ROWID;
CREATE TABLE list_counts (
  list      TEXT NOT NULL,
  owner_id  TEXT NOT NULL,
  n         INTEGER NOT NULL,
  PRIMARY KEY (list, owner_id)
) WITHOUT ROWID;
CREATE TRIGGER suppressions_count_insert AFTER INSERT ON suppressions BEGIN
  INSERT INTO list_counts (list, owner_id, n) VALUES ('suppressions', new.account_id, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER suppressions_count_delete AFTER DELETE ON suppressions BEGIN
  UPDATE list_counts SET n = n - 1 WHERE list = 'suppressions' AND owner_id = old.account_id;
END;
CREATE TABLE emails (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL,
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
CREATE TABLE email_recipients (
  email_id   TEXT NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
  position   INTEGER NOT NULL,
  address    TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT 'QUEUED',
  reply      TEXT,
  canonical  TEXT,
  kind       TEXT NOT NULL DEFAULT 'to', route TEXT, provider_id TEXT, bounce_type TEXT, bounce_reason TEXT,
  PRIMARY KEY (email_id, position)
) WITHOUT ROWID;
CREATE TABLE email_events (
  email_id  TEXT NOT NULL,
  seq       INTEGER NOT NULL,
  type      TEXT NOT NULL,
  at        INTEGER NOT NULL,
  detail    TEXT, route TEXT,
  PRIMARY KEY (email_id, seq)
) WITHOUT ROWID;
CREATE TABLE email_tags (
  email_id    TEXT NOT NULL,
  name        TEXT NOT NULL,
  value       TEXT NOT NULL,
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  status      TEXT NOT NULL,
  PRIMARY KEY (email_id, name)
) WITHOUT ROWID;
CREATE TABLE webhook_deliveries (
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
, last_response TEXT);
CREATE TABLE otp_verifications (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL,
  channel      TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  email        TEXT NOT NULL,
  sent_at      INTEGER NOT NULL,
  verified_at  INTEGER NOT NULL
);
CREATE INDEX emails_log ON emails(account_id, test, created_at DESC, id DESC);
CREATE INDEX emails_log_status ON emails(account_id, test, status, created_at DESC, id DESC);
CREATE INDEX emails_held ON emails(held) WHERE held = 1;
CREATE INDEX emails_due ON emails(due_at) WHERE status = 'QUEUED';
CREATE INDEX emails_scheduled ON emails(due_at) WHERE status = 'SCHEDULED';
CREATE INDEX emails_lease_owner ON emails(lease_owner) WHERE lease_owner IS NOT NULL;
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
CREATE INDEX email_recipients_provider ON email_recipients(provider_id) WHERE provider_id IS NOT NULL;
CREATE INDEX emails_final_updated ON emails(updated_at)
  WHERE status IN ('SENT', 'FAILED', 'CANCELED', 'SUPPRESSED', 'DELIVERED', 'BOUNCED');
CREATE TABLE metric_counts (
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  hour        INTEGER NOT NULL,
  metric      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (account_id, test, hour, metric)
) WITHOUT ROWID;
CREATE TRIGGER metric_recipient_queued AFTER INSERT ON email_recipients BEGIN
  INSERT INTO metric_counts (account_id, test, hour, metric, n)
    SELECT e.account_id, e.test, e.created_at / 3600000 * 3600000, 'queued', 1 FROM emails e WHERE e.id = new.email_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_recipient_status AFTER UPDATE OF status ON email_recipients
  WHEN old.status <> new.status
   AND new.status IN ('SENT', 'DELIVERED', 'BOUNCED', 'COMPLAINED', 'FAILED', 'SUPPRESSED') BEGIN
  INSERT INTO metric_counts (account_id, test, hour, metric, n)
    SELECT e.account_id, e.test, CAST((julianday('now') - 2440587.5) * 24 AS INTEGER) * 3600000, lower(new.status), 1
      FROM emails e WHERE e.id = new.email_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TABLE otp_outcomes (
  session_id  TEXT NOT NULL UNIQUE,
  account_id  TEXT NOT NULL,
  channel     TEXT NOT NULL,
  outcome     TEXT NOT NULL,
  sent_at     INTEGER NOT NULL,
  ended_at    INTEGER NOT NULL
);
CREATE INDEX otp_outcomes_ended ON otp_outcomes(ended_at);
CREATE TRIGGER metric_otp_outcome AFTER INSERT ON otp_outcomes BEGIN
  INSERT INTO metric_counts (account_id, test, hour, metric, n)
    SELECT new.account_id, 0, new.sent_at / 3600000 * 3600000, metric, 1
      FROM (SELECT 'otp.' || new.channel || '.sent' AS metric
            UNION ALL SELECT 'otp.' || new.channel || '.' || new.outcome
            UNION ALL SELECT 'otp.' || new.channel || '.verify_le_' || CASE
                WHEN new.ended_at - new.sent_at <= 10000 THEN '10'
                WHEN new.ended_at - new.sent_at <= 30000 THEN '30'
                WHEN new.ended_at - new.sent_at <= 60000 THEN '60'
                WHEN new.ended_at - new.sent_at <= 120000 THEN '120'
                WHEN new.ended_at - new.sent_at <= 300000 THEN '300'
                WHEN new.ended_at - new.sent_at <= 600000 THEN '600'
                WHEN new.ended_at - new.sent_at <= 1800000 THEN '1800'
                WHEN new.ended_at - new.sent_at <= 3600000 THEN '3600'
                ELSE 'inf' END
              WHERE new.outcome = 'verified')
    WHERE true
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE INDEX email_recipients_bounce_reason ON email_recipients(bounce_reason, email_id)
  WHERE bounce_reason IS NOT NULL;
CREATE TRIGGER metric_recipient_bounced_sender_problem AFTER UPDATE OF status ON email_recipients
  WHEN old.status <> 'BOUNCED' AND new.status = 'BOUNCED'
   AND new.bounce_reason IN ('blocked', 'spam_detected', 'auth_failure', 'policy') BEGIN
  INSERT INTO metric_counts (account_id, test, hour, metric, n)
    SELECT e.account_id, e.test, CAST((julianday('now') - 2440587.5) * 24 AS INTEGER) * 3600000,
        'bounced_sender_problem', 1
      FROM emails e WHERE e.id = new.email_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TABLE email_bodies (
  email_id  TEXT PRIMARY KEY,
  body      TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE object_state (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
) WITHOUT ROWID;
`;
