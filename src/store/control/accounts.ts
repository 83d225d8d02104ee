import { newId, nowIso } from '../../ids';
import { newestFirst, type PageRequest } from '../paging';

export type Account = { id: string; name: string; createdAt: string };

type AccountRow = { id: string; name: string; created_at: string };

const toAccount = (row: AccountRow): Account => ({ id: row.id, name: row.name, createdAt: row.created_at });

export async function createAccount(db: D1Database, name: string): Promise<Account> {
  const account = { id: newId('acc'), name, createdAt: nowIso() };
  await db
    .prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)')
    .bind(account.id, account.name, account.createdAt)
    .run();
  return account;
}

export async function findAccount(db: D1Database, id: string): Promise<Account | null> {
  const row = await db.prepare('SELECT id, name, created_at FROM accounts WHERE id = ?').bind(id).first<AccountRow>();
  return row ? toAccount(row) : null;
}

/** A page of all accounts, newest first. */
export const listAccounts = (db: D1Database, request: PageRequest) =>
  newestFirst(db, { columns: 'id, name, created_at', from: 'FROM accounts WHERE 1', binds: [] }, request, toAccount);
