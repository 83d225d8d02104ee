// An account's receiving subdomain under INBOUND_DOMAIN: `<slug>.<INBOUND_DOMAIN>`. The slug is made from the
// account's name the first time it is asked for and never changes after (mail is addressed to it).
import { accountTagOf } from './accounts';

const MAX_SLUG = 40;

/** The name as a DNS label: lower-case letters, digits and single hyphens; empty when nothing is left. */
export function slugOfName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG)
    .replace(/-+$/, '');
}

const isUniqueViolation = (error: unknown) => String(error).includes('UNIQUE constraint failed');

/** The account's slug, made (and kept) on first use; null when there is no such account. */
export async function inboundSlugOf(db: D1Database, accountId: string): Promise<string | null> {
  const row = await db
    .prepare('SELECT name, inbound_slug FROM accounts WHERE id = ?')
    .bind(accountId)
    .first<{ name: string; inbound_slug: string | null }>();
  if (!row) return null;
  if (row.inbound_slug) return row.inbound_slug;
  const tag = accountTagOf(accountId);
  const base = slugOfName(row.name);
  // The name's slug; taken (or empty): with the start of the tag; else the tag itself, unique by construction.
  const candidates = base ? [base, `${base.slice(0, MAX_SLUG - 5)}-${tag.slice(0, 4)}`, tag] : [tag];
  for (const slug of candidates) {
    try {
      const set = await db
        .prepare('UPDATE accounts SET inbound_slug = ?2 WHERE id = ?1 AND inbound_slug IS NULL RETURNING inbound_slug')
        .bind(accountId, slug)
        .first<string>('inbound_slug');
      if (set) return set;
      // Another request set it meanwhile: that one stands.
      return await db
        .prepare('SELECT inbound_slug FROM accounts WHERE id = ?')
        .bind(accountId)
        .first<string>('inbound_slug');
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  throw new Error(`no free inbound slug for ${accountId}`);
}

/** The account that receives at this slug, or null. */
export async function accountOfInboundSlug(db: D1Database, slug: string): Promise<string | null> {
  return db.prepare('SELECT id FROM accounts WHERE inbound_slug = ?').bind(slug).first<string>('id');
}
