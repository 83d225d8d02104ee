import { newId, nowIso } from '../../ids';
import { newestFirst, type PageRequest } from '../paging';
import type { Jurisdiction, Placement, Region } from '../placement';

export type Account = Placement & { id: string; name: string; createdAt: string; placedAt: string | null };

type AccountRow = {
  id: string;
  name: string;
  created_at: string;
  region: Region | null;
  jurisdiction: Jurisdiction | null;
  placed_at: string | null;
};

const COLUMNS = 'id, name, created_at, region, jurisdiction, placed_at';

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  region: row.region,
  jurisdiction: row.jurisdiction,
  placedAt: row.placed_at,
});

/** The start of an account id's random part, which the ids of its emails carry (40 bits, unique). */
export const accountTagOf = (accountId: string) => accountId.slice(4, 12);

const isUniqueViolation = (error: unknown) => String(error).includes('UNIQUE constraint failed');

export async function createAccount(db: D1Database, name: string, placement: Placement): Promise<Account> {
  for (;;) {
    const account: Account = { id: newId('acc'), name, createdAt: nowIso(), placedAt: null, ...placement };
    try {
      await db
        .prepare('INSERT INTO accounts (id, name, created_at, tag, region, jurisdiction) VALUES (?, ?, ?, ?, ?, ?)')
        .bind(account.id, name, account.createdAt, accountTagOf(account.id), placement.region, placement.jurisdiction)
        .run();
      return account;
    } catch (error) {
      // Another account's id starts the same way (one in 2^40 per account): draw again.
      if (!isUniqueViolation(error)) throw error;
    }
  }
}

export async function findAccount(db: D1Database, id: string): Promise<Account | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM accounts WHERE id = ?`).bind(id).first<AccountRow>();
  return row ? toAccount(row) : null;
}

/**
 * Changes where an account's data will live (fields left undefined keep theirs), only while its object has not
 * been made: `placed` once it has.
 */
export async function changePlacement(
  db: D1Database,
  id: string,
  change: Partial<Placement>,
): Promise<{ kind: 'changed'; account: Account } | { kind: 'placed' } | { kind: 'not-found' }> {
  const row = await db
    .prepare(
      `UPDATE accounts SET
         region = CASE WHEN ?2 = 1 THEN ?3 ELSE region END,
         jurisdiction = CASE WHEN ?4 = 1 THEN ?5 ELSE jurisdiction END
       WHERE id = ?1 AND placed_at IS NULL RETURNING ${COLUMNS}`,
    )
    .bind(
      id,
      change.region === undefined ? 0 : 1,
      change.region ?? null,
      change.jurisdiction === undefined ? 0 : 1,
      change.jurisdiction ?? null,
    )
    .first<AccountRow>();
  if (row) return { kind: 'changed', account: toAccount(row) };
  return (await findAccount(db, id)) ? { kind: 'placed' } : { kind: 'not-found' };
}

/** The account whose tag this is (see `accountTagOf`), or null. */
export async function accountIdOfTag(db: D1Database, tag: string): Promise<string | null> {
  return db.prepare('SELECT id FROM accounts WHERE tag = ?').bind(tag).first<string>('id');
}

/** A page of all accounts, newest first. */
export const listAccounts = (db: D1Database, request: PageRequest) =>
  newestFirst(db, { columns: COLUMNS, from: 'FROM accounts WHERE 1', binds: [] }, request, toAccount);
