// An account's database schema is versioned in code: each object brings its own database up to date when it
// wakes, one version per transaction, before it takes its first request.
import { SCHEMA_V1 } from './schema-v1';
import { SCHEMA_V2 } from './schema-v2';
import { SCHEMA_V3 } from './schema-v3';
import { SCHEMA_V4 } from './schema-v4';

/** Each version's statements, in order; a change appends a version and never edits one. */
export const SCHEMA_VERSIONS: readonly string[] = [SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4];

/** Brings the object's database to the latest version; returns the version it was at. */
export function migrateAccountSchema(storage: DurableObjectStorage, versions = SCHEMA_VERSIONS): number {
  const { sql } = storage;
  sql.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const found = sql.exec<{ version: number }>('SELECT version FROM schema_version').toArray()[0]?.version ?? 0;
  for (let version = found; version < versions.length; version++) {
    storage.transactionSync(() => {
      sql.exec(versions[version]!);
      sql.exec('DELETE FROM schema_version');
      sql.exec('INSERT INTO schema_version (version) VALUES (?)', version + 1);
    });
  }
  return found;
}
