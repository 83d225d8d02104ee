-- Counters behind GET /api/v1/metrics and the dashboard's overview. Triggers keep them in the transaction of
-- the fact they count, so a metrics read costs the same however many emails an account has. A counter is per
-- account, mode (test = 1: test-key mail) and UTC hour (`hour`: its start, epoch milliseconds); it is never
-- decremented, so retention deleting the facts leaves the counts.
CREATE TABLE metric_counts (
  account_id  TEXT NOT NULL,
  test        INTEGER NOT NULL,
  hour        INTEGER NOT NULL,
  metric      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (account_id, test, hour, metric)
) WITHOUT ROWID;

-- Email metrics count recipients: `queued` in the hour the email was accepted, `sent`, `delivered`, `bounced`,
-- `complained`, `failed` and `suppressed` in the hour the recipient reached that status (a recipient's status
-- only moves forward, so each is counted once).
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

-- How each OTP session ended: verified, locked, or expired (written by the recipient's object when it clears an
-- expired session). One row per session (a second write is ignored), kept as long as OTP history.
CREATE TABLE otp_outcomes (
  session_id  TEXT NOT NULL UNIQUE,
  account_id  TEXT NOT NULL,
  channel     TEXT NOT NULL,
  outcome     TEXT NOT NULL,
  sent_at     INTEGER NOT NULL,
  ended_at    INTEGER NOT NULL
);
CREATE INDEX otp_outcomes_ended ON otp_outcomes(ended_at);

-- OTP metrics count sessions in the hour they were sent: `otp.<channel>.sent` and `otp.<channel>.<outcome>`,
-- and for a verified one the bucket of its time to verify, `otp.<channel>.verify_le_<seconds>` (the first
-- bound it is within; 3600 and beyond in `verify_le_inf`).
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
