import { nowIso } from '../../ids';
import { accountRowsNewestFirst } from '../paging';
import type { D1Reader } from './reads';

export type DomainStatus = 'pending' | 'verified' | 'partially_verified' | 'failed';
export type RecordStatus = 'pending' | 'verified' | 'failed';
/** The statuses of a domain that may sign and send. */
export const SENDING_STATUSES: readonly DomainStatus[] = ['verified', 'partially_verified'];

export type DkimSelector = {
  selector: string;
  publicKey: string;
  sealedPrivateKey: string;
  status: RecordStatus;
  createdAt: string;
  verifiedAt: string | null;
  /** Epoch ms after which a selector replaced by a rotation no longer signs; null while it is current. */
  retiresAt: number | null;
};

export type Domain = {
  id: string;
  accountId: string;
  name: string;
  status: DomainStatus;
  returnPathStatus: RecordStatus;
  spfStatus: RecordStatus;
  dmarcStatus: RecordStatus;
  /** Where the domain receives mail (itself or a subdomain), null while receiving there is off. */
  inboundName: string | null;
  /** Its MX record's status (pending while receiving is off). */
  inboundStatus: RecordStatus;
  /** Checks made so far (the backoff of a pending domain grows with them). */
  checks: number;
  nextCheckAt: number | null;
  checkedAt: string | null;
  verifiedAt: string | null;
  createdAt: string;
  /** Oldest first. */
  selectors: DkimSelector[];
};

export type DomainSummary = Pick<Domain, 'id' | 'name' | 'status' | 'createdAt'>;

type DomainRow = {
  id: string;
  account_id: string;
  name: string;
  status: DomainStatus;
  return_path_status: RecordStatus;
  spf_status: RecordStatus;
  dmarc_status: RecordStatus;
  inbound_name: string | null;
  inbound_status: RecordStatus;
  checks: number;
  next_check_at: number | null;
  checked_at: string | null;
  verified_at: string | null;
  created_at: string;
};

type SelectorRow = {
  domain_id: string;
  selector: string;
  public_key: string;
  sealed_private_key: string;
  status: RecordStatus;
  created_at: string;
  verified_at: string | null;
  retires_at: number | null;
};

const DOMAIN_COLUMNS =
  'id, account_id, name, status, return_path_status, spf_status, dmarc_status, inbound_name, inbound_status, checks, next_check_at, checked_at, verified_at, created_at';
const SELECTOR_COLUMNS =
  'domain_id, selector, public_key, sealed_private_key, status, created_at, verified_at, retires_at';

const toSelector = (row: SelectorRow): DkimSelector => ({
  selector: row.selector,
  publicKey: row.public_key,
  sealedPrivateKey: row.sealed_private_key,
  status: row.status,
  createdAt: row.created_at,
  verifiedAt: row.verified_at,
  retiresAt: row.retires_at,
});

const toDomain = (row: DomainRow, selectors: SelectorRow[]): Domain => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  status: row.status,
  returnPathStatus: row.return_path_status,
  spfStatus: row.spf_status,
  dmarcStatus: row.dmarc_status,
  inboundName: row.inbound_name,
  inboundStatus: row.inbound_status,
  checks: row.checks,
  nextCheckAt: row.next_check_at,
  checkedAt: row.checked_at,
  verifiedAt: row.verified_at,
  createdAt: row.created_at,
  selectors: selectors.filter((s) => s.domain_id === row.id).map(toSelector),
});

const isUniqueViolation = (error: unknown) => String(error).includes('UNIQUE constraint failed');

const insertSelector = (db: D1Database, domainId: string, selector: DkimSelector) =>
  db
    .prepare(`INSERT INTO dkim_selectors (${SELECTOR_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
    .bind(
      domainId,
      selector.selector,
      selector.publicKey,
      selector.sealedPrivateKey,
      selector.status,
      selector.createdAt,
      selector.verifiedAt,
      selector.retiresAt,
    );

/** Stores a new domain with its first selector; `exists` when the account has the name already. */
export async function createDomain(
  db: D1Database,
  domain: Pick<Domain, 'id' | 'accountId' | 'name' | 'nextCheckAt'> & { selector: DkimSelector },
): Promise<{ kind: 'created'; domain: Domain } | { kind: 'exists' }> {
  const createdAt = nowIso();
  try {
    await db.batch([
      db
        .prepare('INSERT INTO domains (id, account_id, name, next_check_at, created_at) VALUES (?, ?, ?, ?, ?)')
        .bind(domain.id, domain.accountId, domain.name, domain.nextCheckAt, createdAt),
      insertSelector(db, domain.id, domain.selector),
    ]);
  } catch (error) {
    if (isUniqueViolation(error)) return { kind: 'exists' };
    throw error;
  }
  return {
    kind: 'created',
    domain: {
      ...domain,
      status: 'pending',
      returnPathStatus: 'pending',
      spfStatus: 'pending',
      dmarcStatus: 'pending',
      inboundName: null,
      inboundStatus: 'pending',
      checks: 0,
      checkedAt: null,
      verifiedAt: null,
      createdAt,
      selectors: [domain.selector],
    },
  };
}

/** A domain of this account (another account's id reads as unknown), with its selectors, in one round trip. */
export async function findDomain(db: D1Reader, accountId: string, id: string): Promise<Domain | null> {
  const [domains, selectors] = await db.batch([
    db.prepare(`SELECT ${DOMAIN_COLUMNS} FROM domains WHERE id = ? AND account_id = ?`).bind(id, accountId),
    db
      .prepare(
        `SELECT ${SELECTOR_COLUMNS} FROM dkim_selectors WHERE domain_id = (SELECT id FROM domains WHERE id = ? AND account_id = ?)
         ORDER BY created_at, selector`,
      )
      .bind(id, accountId),
  ]);
  const row = domains!.results[0] as DomainRow | undefined;
  return row ? toDomain(row, selectors!.results as SelectorRow[]) : null;
}

/** A page of the account's domains, newest first. */
export const listDomains = accountRowsNewestFirst(
  'domains',
  'id, name, status, created_at',
  (row: { id: string; name: string; status: DomainStatus; created_at: string }): DomainSummary => ({
    id: row.id,
    name: row.name,
    status: row.status,
    createdAt: row.created_at,
  }),
);

export async function deleteDomain(db: D1Database, accountId: string, id: string): Promise<boolean> {
  const result = await db.prepare('DELETE FROM domains WHERE id = ? AND account_id = ?').bind(id, accountId).run();
  return result.meta.changes > 0;
}

export async function addSelector(db: D1Database, domainId: string, selector: DkimSelector): Promise<void> {
  await insertSelector(db, domainId, selector).run();
}

/**
 * Writes a check's outcome: the domain's statuses and schedule, each selector's status and retirement, the
 * selectors past retirement gone, and `also` (its webhook events) in the same transaction, whose results end
 * the answer. `taken` when the domain would hold its name while another account does (nothing written then).
 */
export async function saveDomain(
  db: D1Database,
  domain: Domain,
  now: number,
): Promise<{ kind: 'saved' } | { kind: 'taken' }> {
  const listed = domain.selectors;
  try {
    await db.batch([
      db
        .prepare(
          // A receiving name moved during the check keeps its own status and first check (set by the move).
          `UPDATE domains SET status = ?1, return_path_status = ?2, spf_status = ?3, dmarc_status = ?4,
             inbound_status = CASE WHEN inbound_name IS ?11 THEN ?5 ELSE inbound_status END,
             checks = CASE WHEN inbound_name IS ?11 THEN ?6 ELSE checks END,
             next_check_at = CASE WHEN inbound_name IS ?11 THEN ?7 ELSE next_check_at END,
             checked_at = ?8, verified_at = ?9 WHERE id = ?10`,
        )
        .bind(
          domain.status,
          domain.returnPathStatus,
          domain.spfStatus,
          domain.dmarcStatus,
          domain.inboundStatus,
          domain.checks,
          domain.nextCheckAt,
          domain.checkedAt,
          domain.verifiedAt,
          domain.id,
          domain.inboundName,
        ),
      ...listed.map((s) =>
        db
          .prepare(
            'UPDATE dkim_selectors SET status = ?, verified_at = ?, retires_at = ? WHERE domain_id = ? AND selector = ?',
          )
          .bind(s.status, s.verifiedAt, s.retiresAt, domain.id, s.selector),
      ),
      db
        .prepare('DELETE FROM dkim_selectors WHERE domain_id = ? AND retires_at IS NOT NULL AND retires_at <= ?')
        .bind(domain.id, now),
    ]);
    return { kind: 'saved' };
  } catch (error) {
    if (isUniqueViolation(error)) return { kind: 'taken' };
    throw error;
  }
}

/** Domains whose next check is due, soonest first (the scheduled handler's work). */
export async function dueDomains(db: D1Database, now: number, limit: number): Promise<Domain[]> {
  const [domains, selectors] = await db.batch([
    db
      .prepare(
        `SELECT ${DOMAIN_COLUMNS} FROM domains WHERE next_check_at IS NOT NULL AND next_check_at <= ?
         ORDER BY next_check_at LIMIT ?`,
      )
      .bind(now, limit),
    db
      .prepare(
        `SELECT ${SELECTOR_COLUMNS} FROM dkim_selectors WHERE domain_id IN (SELECT id FROM domains
           WHERE next_check_at IS NOT NULL AND next_check_at <= ? ORDER BY next_check_at LIMIT ?)
         ORDER BY created_at, selector`,
      )
      .bind(now, limit),
  ]);
  const rows = selectors!.results as SelectorRow[];
  return (domains!.results as DomainRow[]).map((row) => toDomain(row, rows));
}

/** The key that signs mail of the account from `name`, when that domain may send: its newest verified selector. */
export type SigningDomain = {
  name: string;
  status: DomainStatus;
  selector: string;
  sealedPrivateKey: string;
};

export async function findSigningDomain(
  db: D1Reader,
  accountId: string,
  name: string,
  now: number,
): Promise<SigningDomain | null> {
  const row = await db
    .prepare(
      `SELECT d.name, d.status, s.selector, s.sealed_private_key FROM domains AS d
         JOIN dkim_selectors AS s ON s.domain_id = d.id
       WHERE d.account_id = ? AND d.name = ? AND d.status IN ('verified', 'partially_verified')
         AND s.status = 'verified' AND (s.retires_at IS NULL OR s.retires_at > ?)
       ORDER BY s.created_at DESC LIMIT 1`,
    )
    .bind(accountId, name, now)
    .first<{ name: string; status: DomainStatus; selector: string; sealed_private_key: string }>();
  return row
    ? { name: row.name, status: row.status, selector: row.selector, sealedPrivateKey: row.sealed_private_key }
    : null;
}

/** The names of the account's sending domains, whatever their status (ASCII, lower-case). */
export async function domainNamesOf(db: D1Reader, accountId: string): Promise<string[]> {
  const rows = await db
    .prepare('SELECT name FROM domains WHERE account_id = ?')
    .bind(accountId)
    .all<{ name: string }>();
  return rows.results.map((r) => r.name.toLowerCase());
}
