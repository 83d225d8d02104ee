// Version 4 of an account's database: received mail. The raw message and the attachments are in R2 (their keys
// here); addresses and ids are columns, lists of addresses JSON arrays of { address, name }.
export const SCHEMA_V4 = `
CREATE TABLE inbound_messages (
  id               TEXT PRIMARY KEY,
  account_id       TEXT NOT NULL,
  route_id         TEXT NOT NULL,
  action           TEXT NOT NULL,
  envelope_from    TEXT NOT NULL,
  envelope_to      TEXT NOT NULL,
  from_address     TEXT,
  from_name        TEXT,
  to_list          TEXT NOT NULL,
  cc_list          TEXT NOT NULL,
  reply_to_list    TEXT NOT NULL,
  subject          TEXT,
  sent_date        TEXT,
  message_id       TEXT,
  in_reply_to      TEXT,
  reference_ids    TEXT NOT NULL,
  email_id         TEXT,
  text_body        TEXT,
  html_body        TEXT,
  headers          TEXT NOT NULL,
  attachments      TEXT NOT NULL,
  spf              TEXT NOT NULL,
  dkim             TEXT NOT NULL,
  dmarc            TEXT NOT NULL,
  auto_reply       INTEGER NOT NULL,
  delivery_report  INTEGER NOT NULL,
  spoofed          INTEGER NOT NULL,
  size             INTEGER NOT NULL,
  raw_key          TEXT NOT NULL,
  received_at      INTEGER NOT NULL
);
CREATE INDEX inbound_messages_received ON inbound_messages(received_at, id);
CREATE INDEX inbound_messages_email ON inbound_messages(email_id) WHERE email_id IS NOT NULL;
`;
