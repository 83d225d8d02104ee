// Version 2 of an account's database: a webhook endpoint may be a listening session (`postcode webhooks listen`),
// which the Worker reaches through its WebhookListener object instead of a URL.
export const SCHEMA_V2 = `
ALTER TABLE webhook_endpoints ADD COLUMN listener INTEGER NOT NULL DEFAULT 0;
`;
