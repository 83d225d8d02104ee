// The suppression list of an account: canonical addresses that queued mail skips while their entry lasts.

import { nowIso } from '../../ids';
import { listCount, type PageRequest, readPage } from '../paging';
import { isoOrNull } from '../time';
import type { AccountSql } from './object-sql';

/** hard_bounce and complaint come back after the relay; rcpt_rejected is a 5xx at RCPT TO; manual, added here. */
export type SuppressionReason = 'hard_bounce' | 'complaint' | 'rcpt_rejected' | 'manual';

export type Suppression = {
  email: string;
  reason: SuppressionReason;
  /** The server's words (a refusal, a bounce's diagnostic) or the note it was added with. */
  note: string | null;
  /** The email that caused it (null: added by hand). */
  emailId: string | null;
  /** When it stops blocking (null: never). An expired entry is kept, listed, and blocks nothing. */
  expiresAt: string | null;
  createdAt: string;
};

type SuppressionRow = {
  email: string;
  reason: SuppressionReason;
  note: string | null;
  email_id: string | null;
  expires_at: number | null;
  created_at: string;
};

const COLUMNS = 'email, reason, note, email_id, expires_at, created_at';

const toSuppression = (row: SuppressionRow): Suppression => ({
  email: row.email,
  reason: row.reason,
  note: row.note,
  emailId: row.email_id,
  expiresAt: isoOrNull(row.expires_at),
  createdAt: row.created_at,
});

/**
 * The start of an insert of entries (columns in this order: account_id, email, reason, note, email_id,
 * expires_at, source, created_at); end it with `SUPPRESSION_CONFLICT`.
 */
export const SUPPRESSION_UPSERT =
  'INSERT INTO suppressions (account_id, email, reason, note, email_id, expires_at, source, created_at)';

/**
 * A new entry for a listed address replaces it when the old one has expired or the new one lasts longer
 * (a complaint outlasts a hard bounce); otherwise the address stays as it was listed.
 */
export const SUPPRESSION_CONFLICT = `ON CONFLICT (account_id, email) DO UPDATE SET reason = excluded.reason,
  note = excluded.note, email_id = excluded.email_id, expires_at = excluded.expires_at, source = excluded.source,
  created_at = excluded.created_at
  WHERE suppressions.expires_at IS NOT NULL AND (excluded.expires_at IS NULL
    OR excluded.expires_at > suppressions.expires_at OR suppressions.expires_at <= unixepoch('subsec') * 1000)`;

/** The condition under which an address is suppressed now (`s` the suppressions row, `now` epoch ms). */
export const suppressedNow = (now: string) => `(s.expires_at IS NULL OR s.expires_at > ${now})`;

/** Newest first; the total from the counter a trigger keeps (migrations/0001_init.sql). */
export const listSuppressions = (db: AccountSql, accountId: string, request: PageRequest) =>
  readPage(
    db,
    {
      select: `SELECT ${COLUMNS} FROM suppressions WHERE account_id = ?`,
      binds: [accountId],
      order: { time: 'created_at', clock: 'iso', key: 'email', keyOrder: 'ASC' },
      count: listCount(db, 'suppressions', accountId),
    },
    request,
    toSuppression,
  );

/**
 * Adds a canonical address by hand (reason manual, with an optional note and expiry); an address listed
 * already is listed as this entry from now on. `added`: it was not suppressed before (a new or expired entry).
 */
export async function addSuppression(
  db: AccountSql,
  accountId: string,
  entry: { email: string; note: string | null; expiresAt: number | null },
): Promise<{ suppression: Suppression; added: boolean }> {
  const [before, row] = await db.batch([
    db
      .prepare(`SELECT 1 FROM suppressions s WHERE account_id = ? AND email = ? AND ${suppressedNow('?3')}`)
      .bind(accountId, entry.email, Date.now()),
    db
      .prepare(
        `${SUPPRESSION_UPSERT} VALUES (?1, ?2, 'manual', ?3, NULL, ?4, 'manual', ?5)
         ON CONFLICT (account_id, email) DO UPDATE SET reason = 'manual', note = ?3, email_id = NULL, expires_at = ?4,
           source = 'manual'
         RETURNING ${COLUMNS}`,
      )
      .bind(accountId, entry.email, entry.note, entry.expiresAt, nowIso()),
  ]);
  return { suppression: toSuppression(row!.results[0] as SuppressionRow), added: before!.results.length === 0 };
}

/** Removes an address; the entry it had, or null when it was not listed. */
export async function removeSuppression(db: AccountSql, accountId: string, email: string): Promise<Suppression | null> {
  const row = await db
    .prepare(`DELETE FROM suppressions WHERE account_id = ? AND email = ? RETURNING ${COLUMNS}`)
    .bind(accountId, email)
    .first<SuppressionRow>();
  return row ? toSuppression(row) : null;
}
