-- The start of the last answer's body (at most 2,048 bytes) of each webhook delivery, for the delivery log;
-- NULL when no answer came.
ALTER TABLE webhook_deliveries ADD COLUMN last_response TEXT;
