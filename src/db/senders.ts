import { newId, nowIso } from '../ids';
import { accountRowsNewestFirst } from './paging';

export type Sender = {
  id: string;
  accountId: string;
  email: string;
  name: string | null;
  verified: boolean;
  createdAt: string;
};

type SenderRow = {
  id: string;
  account_id: string;
  email: string;
  name: string | null;
  verified: number;
  created_at: string;
};

const COLUMNS = 'id, account_id, email, name, verified, created_at';

const toSender = (row: SenderRow): Sender => ({
  id: row.id,
  accountId: row.account_id,
  email: row.email,
  name: row.name,
  verified: row.verified === 1,
  createdAt: row.created_at,
});

/** Senders are created by the operator, who vouches for them: they are verified on creation. */
export async function createSender(db: D1Database, accountId: string, email: string, name: string | null) {
  const sender: Sender = { id: newId('snd'), accountId, email, name, verified: true, createdAt: nowIso() };
  await db
    .prepare('INSERT INTO senders (id, account_id, email, name, verified, created_at) VALUES (?, ?, ?, ?, 1, ?)')
    .bind(sender.id, accountId, email, name, sender.createdAt)
    .run();
  return sender;
}

/** Only finds senders of this account, so another account's id reads as unknown. */
export async function findSender(db: D1Database, accountId: string, id: string): Promise<Sender | null> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM senders WHERE id = ? AND account_id = ?`)
    .bind(id, accountId)
    .first<SenderRow>();
  return row ? toSender(row) : null;
}

/** A verified sender of this account with this address (case-insensitive), for OTP `from` overrides. */
export async function findSenderByEmail(db: D1Database, accountId: string, email: string): Promise<Sender | null> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM senders WHERE account_id = ? AND lower(email) = lower(?) LIMIT 1`)
    .bind(accountId, email)
    .first<SenderRow>();
  return row ? toSender(row) : null;
}

/** A page of the account's senders, newest first. */
export const listSenders = accountRowsNewestFirst('senders', COLUMNS, toSender);
