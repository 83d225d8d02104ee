-- An account's receiving subdomain: `<inbound_slug>.<INBOUND_DOMAIN>`, made from its name the first time it is asked
-- for, and fixed from then on (mail is addressed to it). Unique across accounts.
ALTER TABLE accounts ADD COLUMN inbound_slug TEXT;
CREATE UNIQUE INDEX accounts_inbound_slug ON accounts(inbound_slug);
