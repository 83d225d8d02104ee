import { DurableObject } from 'cloudflare:workers';

/** How long a provider's message id leads to its account: its events come within days, not months. */
const KEEP_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 86_400_000;

/**
 * Which account sent the message a delivery provider (Cloudflare Email Service) named with an id of its own, for
 * the provider's events, which name nothing else. One object per shard of ids (`provider-index:<two hex digits>`
 * of the id's SHA-256), so that no object is shared by all mail; entries go after 30 days.
 */
export class ProviderIndex extends DurableObject {
  private ready = false;

  private tables(): void {
    if (this.ready) return;
    this.ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS provider_ids (
         provider_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
       CREATE INDEX IF NOT EXISTS provider_ids_at ON provider_ids(at);`,
    );
    this.ready = true;
  }

  async note(accountId: string, providerIds: string[]): Promise<void> {
    this.tables();
    const now = Date.now();
    for (const id of providerIds) {
      this.ctx.storage.sql.exec(
        'INSERT OR REPLACE INTO provider_ids (provider_id, account_id, at) VALUES (?, ?, ?)',
        id,
        accountId,
        now,
      );
    }
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(now + PRUNE_EVERY_MS);
  }

  accountOf(providerId: string): string | null {
    this.tables();
    const row = this.ctx.storage.sql
      .exec<{ account_id: string }>('SELECT account_id FROM provider_ids WHERE provider_id = ?', providerId)
      .toArray()[0];
    return row?.account_id ?? null;
  }

  async alarm(): Promise<void> {
    this.tables();
    const { sql } = this.ctx.storage;
    sql.exec('DELETE FROM provider_ids WHERE at < ?', Date.now() - KEEP_MS);
    const left = sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM provider_ids').one().n;
    if (left > 0) await this.ctx.storage.setAlarm(Date.now() + PRUNE_EVERY_MS);
  }
}
