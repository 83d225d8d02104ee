import { newId, nowIso } from '../../ids';
import { accountRowsNewestFirst } from '../paging';
import type { DomainStatus } from './domains';
import type { D1Reader } from './reads';

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

/**
 * A sender verified on creation: the operator vouches for it, or its address is on a verified domain of the
 * account. `pending` instead: it waits for its address to confirm with the token whose hash is given.
 */
export async function createSender(
  db: D1Database,
  accountId: string,
  email: string,
  name: string | null,
  pending?: ConfirmToken,
) {
  const sender: Sender = { id: newId('snd'), accountId, email, name, verified: !pending, createdAt: nowIso() };
  await db
    .prepare(
      `INSERT INTO senders (id, account_id, email, name, verified, created_at, confirm_token_hash, confirm_expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      sender.id,
      accountId,
      email,
      name,
      pending ? 0 : 1,
      sender.createdAt,
      pending?.hash ?? null,
      pending?.expiresAt ?? null,
    )
    .run();
  return sender;
}

/** A confirmation token's SHA-256 and when it expires (epoch ms). */
export type ConfirmToken = { hash: string; expiresAt: number };

/** A new token for a pending sender (the previous one no longer works); false when it is not pending. */
export async function renewConfirmToken(db: D1Database, accountId: string, id: string, token: ConfirmToken) {
  const result = await db
    .prepare(
      `UPDATE senders SET confirm_token_hash = ?, confirm_expires_at = ?
       WHERE id = ? AND account_id = ? AND verified = 0`,
    )
    .bind(token.hash, token.expiresAt, id, accountId)
    .run();
  return result.meta.changes > 0;
}

/** The pending sender a live token confirms (not consumed: the page shows it before the press). */
export async function findSenderByToken(db: D1Database, hash: string, now: number): Promise<Sender | null> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM senders WHERE confirm_token_hash = ? AND confirm_expires_at > ? AND verified = 0`)
    .bind(hash, now)
    .first<SenderRow>();
  return row ? toSender(row) : null;
}

/**
 * Confirms the sender of a live token, once: the token is gone with it. `also` (its webhook events, written
 * only when the confirmation was: `changes() = 1`) runs in the same transaction; its results end the answer.
 * Null for an unknown, used or expired token.
 */
export async function confirmSender(db: D1Database, hash: string, now: number): Promise<Sender | null> {
  const row = await db
    .prepare(
      `UPDATE senders SET verified = 1, confirm_token_hash = NULL, confirm_expires_at = NULL
       WHERE confirm_token_hash = ? AND confirm_expires_at > ? AND verified = 0
       RETURNING ${COLUMNS}`,
    )
    .bind(hash, now)
    .first<SenderRow>();
  return row ? toSender(row) : null;
}

export async function deleteSender(db: D1Database, accountId: string, id: string): Promise<boolean> {
  const result = await db.prepare('DELETE FROM senders WHERE id = ? AND account_id = ?').bind(id, accountId).run();
  return result.meta.changes > 0;
}

/** Only finds senders of this account, so another account's id reads as unknown. */
export async function findSender(db: D1Reader, accountId: string, id: string): Promise<Sender | null> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM senders WHERE id = ? AND account_id = ?`)
    .bind(id, accountId)
    .first<SenderRow>();
  return row ? toSender(row) : null;
}

/**
 * What lets the account send from `email` (case-insensitive): its sender of that address, verified or not, and
 * the status of its domain `domainName` (null: none), in one statement.
 */
export async function findSendingRights(
  db: D1Reader,
  accountId: string,
  email: string,
  domainName: string,
): Promise<{ sender: Sender | null; domainStatus: DomainStatus | null }> {
  const row = await db
    .prepare(
      `SELECT s.id, s.account_id, s.email, s.name, s.verified, s.created_at,
         (SELECT status FROM domains WHERE account_id = ?1 AND name = ?3) AS domain_status
       FROM (SELECT 1) LEFT JOIN senders AS s ON s.account_id = ?1 AND lower(s.email) = lower(?2)
       LIMIT 1`,
    )
    .bind(accountId, email, domainName)
    .first<Partial<SenderRow> & { domain_status: DomainStatus | null }>();
  return {
    sender: row?.id ? toSender(row as SenderRow) : null,
    domainStatus: row?.domain_status ?? null,
  };
}

/** A page of the account's senders, newest first. */
export const listSenders = accountRowsNewestFirst('senders', COLUMNS, toSender);
