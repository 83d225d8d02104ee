// Receiving on an account's own sending domain: the name mail arrives at (the domain or a subdomain of it), kept
// on the domain's row. Only a domain that signs (verified or partially verified, so held by one account) receives,
// and a name belongs to the account holding the most specific domain over it: another account holding
// `shop.example.com` owns that name and the names under it, whoever holds `example.com`. Every check reads the
// names over one receiving name through the held-name index, never the whole table.
import type { D1Reader } from './reads';

const HELD = "status IN ('verified', 'partially_verified')";

/** The domains more specific than `domain` that `name` is, or is under (`a.shop.example.com` over `example.com`). */
export function namesBetween(name: string, domain: string): string[] {
  const labels = name.split('.');
  const names: string[] = [];
  for (let i = 0; i < labels.length; i++) {
    const candidate = labels.slice(i).join('.');
    if (candidate.length <= domain.length) break;
    names.push(candidate);
  }
  return names;
}

/** Whether another account than `accountId` holds one of `names` (a JSON array bound as the first parameter). */
const HELD_BY_ANOTHER = `EXISTS (SELECT 1 FROM domains AS o WHERE o.name IN (SELECT value FROM json_each(?1))
  AND o.${HELD} AND o.account_id != ?2)`;

const coveredByAnother = (db: D1Reader, accountId: string, name: string, domain: string) =>
  db.prepare(`SELECT ${HELD_BY_ANOTHER} AS covered`).bind(JSON.stringify(namesBetween(name, domain)), accountId);

/**
 * Receiving at `name` (under the domain `domainName`), its MX record pending and checked from `nextCheckAt`.
 * `taken` when another account holds a more specific domain over the name; `missing` for no such domain.
 */
export async function setInboundName(
  db: D1Database,
  accountId: string,
  id: string,
  name: string,
  domainName: string,
  nextCheckAt: number,
): Promise<'set' | 'taken' | 'missing'> {
  const changed = await db
    .prepare(
      `UPDATE domains SET inbound_name = ?4, inbound_status = 'pending', checks = 0, next_check_at = ?5
       WHERE id = ?3 AND account_id = ?2 AND NOT ${HELD_BY_ANOTHER} RETURNING id`,
    )
    .bind(JSON.stringify(namesBetween(name, domainName)), accountId, id, name, nextCheckAt)
    .first<string>('id');
  if (changed) return 'set';
  const exists = await db.prepare('SELECT 1 FROM domains WHERE id = ? AND account_id = ?').bind(id, accountId).first();
  return exists ? 'taken' : 'missing';
}

/** Receiving off; the domain's schedule is left as it is (a failed domain stays unchecked). */
export async function clearInboundName(db: D1Database, accountId: string, id: string): Promise<boolean> {
  const cleared = await db
    .prepare(
      "UPDATE domains SET inbound_name = NULL, inbound_status = 'pending' WHERE id = ? AND account_id = ? RETURNING id",
    )
    .bind(id, accountId)
    .first<string>('id');
  return cleared !== null;
}

type Row = { id: string; account_id: string; name: string; inbound_name: string };

/** The rows of `rows` whose name no other account's more specific domain covers. */
async function uncovered(db: D1Reader, rows: Row[]): Promise<Row[]> {
  if (rows.length === 0) return [];
  const checks = await db.batch(rows.map((r) => coveredByAnother(db, r.account_id, r.inbound_name, r.name)));
  return rows.filter((_, i) => (checks[i]!.results[0] as { covered: number }).covered === 0);
}

/** The account's own receiving names, oldest domain first, with the domain each belongs to. */
export async function inboundNamesOf(db: D1Reader, accountId: string): Promise<{ domainId: string; name: string }[]> {
  const rows = await db
    .prepare(
      `SELECT id, account_id, name, inbound_name FROM domains
       WHERE account_id = ? AND inbound_name IS NOT NULL AND ${HELD} ORDER BY created_at, id`,
    )
    .bind(accountId)
    .all<Row>();
  return (await uncovered(db, rows.results)).map((r) => ({ domainId: r.id, name: r.inbound_name }));
}

/** The account that receives at `name` on a domain of its own (the most specific holder's), or null. */
export async function accountOfInboundName(db: D1Reader, name: string): Promise<string | null> {
  const rows = await db
    .prepare(
      `SELECT id, account_id, name, inbound_name FROM domains WHERE inbound_name = ? AND ${HELD}
       ORDER BY length(name) DESC, id`,
    )
    .bind(name)
    .all<Row>();
  return (await uncovered(db, rows.results))[0]?.account_id ?? null;
}
