// The two planes' schemas: D1 holds only the control plane; each account's object brings its own database up to
// the version in code when it wakes, once, and a version appended later is applied to an existing database.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { accountObject, accountStore } from '../../src/store/account/client';
import { migrateAccountSchema, SCHEMA_VERSIONS } from '../../src/store/account/schema';
import { newAccount } from '../support/api';

const CONTROL_PLANE = [
  'accounts',
  'api_keys',
  'audit_log',
  'dashboard_sessions',
  'dkim_selectors',
  'domains',
  'held_mail',
  'members',
  'otp_tokens',
  'senders',
  'settings',
];

const ACCOUNT_TABLES = [
  'daily_usage',
  'email_attachments',
  'email_bodies',
  'email_counts',
  'email_events',
  'email_recipients',
  'email_tags',
  'emails',
  'idempotency_records',
  'inbound_messages',
  'inbound_routes',
  'list_counts',
  'metric_counts',
  'object_state',
  'otp_branding',
  'otp_outcomes',
  'otp_verifications',
  'schema_version',
  'suppressions',
  'tag_counts',
  'templates',
  'webhook_deliveries',
  'webhook_endpoints',
];

const stubOf = (name: string) => env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(name));
const tablesOf = (sql: SqlStorage) =>
  sql
    .exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )
    .toArray()
    .map((r) => r.name);

describe('schemas of the two planes', () => {
  it('D1 holds the control plane only: no email, recipient, event, delivery or history table', async () => {
    const { results } = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'd1_migrations' ORDER BY name",
    ).all<{ name: string }>();
    expect(results.map((r) => r.name)).toEqual(CONTROL_PLANE);
  });

  it("an account's object has its tables at the latest version after its first call", async () => {
    const { accountId } = await newAccount();
    await accountStore(env, accountId).listTemplates(accountId, { page: 1, limit: 10, after: null });
    const { tables, version } = await runInDurableObject(stubOf(accountId), (_instance, state) => ({
      tables: tablesOf(state.storage.sql),
      version: state.storage.sql.exec<{ version: number }>('SELECT version FROM schema_version').one().version,
    }));
    expect(tables).toEqual(ACCOUNT_TABLES);
    expect(version).toBe(SCHEMA_VERSIONS.length);
  });

  it('a version appended later is applied once to a database at an earlier one, keeping its rows', async () => {
    const { accountId } = await newAccount();
    const store = accountStore(env, accountId);
    await store.putOtpBranding(accountId, {
      productName: 'Kept',
      logoUrl: null,
      accentColor: null,
      supportEmail: null,
    });
    const next = [...SCHEMA_VERSIONS, 'ALTER TABLE otp_branding ADD COLUMN footer TEXT'];
    const result = await runInDurableObject(stubOf(accountId), (_instance, state) => {
      const from = migrateAccountSchema(state.storage, next);
      const again = migrateAccountSchema(state.storage, next);
      const row = state.storage.sql
        .exec<{ product_name: string; footer: string | null }>('SELECT product_name, footer FROM otp_branding')
        .one();
      return { from, again, row };
    });
    expect(result).toEqual({
      from: SCHEMA_VERSIONS.length,
      again: SCHEMA_VERSIONS.length + 1,
      row: { product_name: 'Kept', footer: null },
    });
  });

  it('an object answers for its own account only', async () => {
    const { accountId } = await newAccount();
    const other = await newAccount();
    const stub = accountObject(env, accountId);
    expect(await stub.run(accountId, 'listEndpoints', [accountId])).toEqual({ ok: true, value: [] });
    expect(await stub.run(other.accountId, 'listEndpoints', [other.accountId])).toEqual({
      ok: false,
      message: expect.stringMatching(/not this object's/),
    });
    expect(await stub.run(accountId, 'noSuchOperation', [])).toEqual({
      ok: false,
      message: expect.stringMatching(/no operation/),
    });
  });
});
