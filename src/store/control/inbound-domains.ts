// Receiving on an account's own sending domain: the name mail arrives at (the domain or a subdomain of it), kept
// on the domain's row. Only a domain that signs (verified or partially verified, so held by one account) receives.
import type { D1Reader } from './reads';

const HELD = "status IN ('verified', 'partially_verified')";

/**
 * Sets (or, with null, clears) where the domain receives; its MX record is pending again and checked from
 * `nextCheckAt`. `taken` when another account's domain receives at that name; `missing` for no such domain.
 */
export async function setInboundName(
  db: D1Database,
  accountId: string,
  id: string,
  name: string | null,
  nextCheckAt: number,
): Promise<'set' | 'taken' | 'missing'> {
  const changed = await db
    .prepare(
      `UPDATE domains SET inbound_name = ?3, inbound_status = 'pending', checks = 0, next_check_at = ?4
       WHERE id = ?1 AND account_id = ?2 AND (?3 IS NULL OR NOT EXISTS (
         SELECT 1 FROM domains WHERE inbound_name = ?3 AND account_id != ?2 AND ${HELD}))
       RETURNING id`,
    )
    .bind(id, accountId, name, nextCheckAt)
    .first<string>('id');
  if (changed) return 'set';
  const exists = await db.prepare('SELECT 1 FROM domains WHERE id = ? AND account_id = ?').bind(id, accountId).first();
  return exists ? 'taken' : 'missing';
}

/** The account's own receiving names, oldest domain first, with the domain each belongs to. */
export async function inboundNamesOf(db: D1Reader, accountId: string): Promise<{ domainId: string; name: string }[]> {
  const rows = await db
    .prepare(
      `SELECT id, inbound_name FROM domains WHERE account_id = ? AND inbound_name IS NOT NULL AND ${HELD}
       ORDER BY created_at, id`,
    )
    .bind(accountId)
    .all<{ id: string; inbound_name: string }>();
  return rows.results.map((r) => ({ domainId: r.id, name: r.inbound_name }));
}

/** The account that receives at `name` on a domain of its own, or null. */
export async function accountOfInboundName(db: D1Reader, name: string): Promise<string | null> {
  return await db
    .prepare(`SELECT account_id FROM domains WHERE inbound_name = ? AND ${HELD} ORDER BY verified_at, id LIMIT 1`)
    .bind(name)
    .first<string>('account_id');
}
