import { newId, nowIso } from '../../ids';
import { newestFirst, type PageRequest } from '../paging';

export type Account = { id: string; name: string; createdAt: string };

type AccountRow = { id: string; name: string; created_at: string };

const toAccount = (row: AccountRow): Account => ({ id: row.id, name: row.name, createdAt: row.created_at });

/** The start of an account id's random part, which the ids of its emails carry (40 bits, unique). */
export const accountTagOf = (accountId: string) => accountId.slice(4, 12);

const isUniqueViolation = (error: unknown) => String(error).includes('UNIQUE constraint failed');

export async function createAccount(db: D1Database, name: string): Promise<Account> {
  for (;;) {
    const account = { id: newId('acc'), name, createdAt: nowIso() };
    try {
      await db
        .prepare('INSERT INTO accounts (id, name, created_at, tag) VALUES (?, ?, ?, ?)')
        .bind(account.id, account.name, account.createdAt, accountTagOf(account.id))
        .run();
      return account;
    } catch (error) {
      // Another account's id starts the same way (one in 2^40 per account): draw again.
      if (!isUniqueViolation(error)) throw error;
    }
  }
}

export async function findAccount(db: D1Database, id: string): Promise<Account | null> {
  const row = await db.prepare('SELECT id, name, created_at FROM accounts WHERE id = ?').bind(id).first<AccountRow>();
  return row ? toAccount(row) : null;
}

/** The account whose tag this is (see `accountTagOf`), or null. */
export async function accountIdOfTag(db: D1Database, tag: string): Promise<string | null> {
  return db.prepare('SELECT id FROM accounts WHERE tag = ?').bind(tag).first<string>('id');
}

/** A page of all accounts, newest first. */
export const listAccounts = (db: D1Database, request: PageRequest) =>
  newestFirst(db, { columns: 'id, name, created_at', from: 'FROM accounts WHERE 1', binds: [] }, request, toAccount);
