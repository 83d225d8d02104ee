-- Receiving on an account's own domain: `inbound_name` is the name mail arrives at (the domain or a subdomain of
-- it), null while receiving there is off; `inbound_status` is its MX record's, checked with the domain's others.
ALTER TABLE domains ADD COLUMN inbound_name TEXT;
ALTER TABLE domains ADD COLUMN inbound_status TEXT NOT NULL DEFAULT 'pending';
CREATE INDEX domains_inbound_name ON domains(inbound_name) WHERE inbound_name IS NOT NULL;
