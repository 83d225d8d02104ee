-- A session is verified once, so its history row is unique. This lets a history row that had to go
-- through the queue (D1 failed during the verify) be written idempotently.
CREATE UNIQUE INDEX otp_verifications_session ON otp_verifications(session_id);
