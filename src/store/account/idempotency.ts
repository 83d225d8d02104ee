import { newId, nowIso } from '../../ids';
import type { AccountSql } from './object-sql';
import type { EmailOwner } from './schedule';

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

export type IdempotencyRecord = {
  requestHash: string;
  responseStatus: number | null;
  responseBody: string | null;
  claimId: string | null;
};

type IdempotencyRow = {
  request_hash: string;
  response_status: number | null;
  response_body: string | null;
  claim_id: string | null;
};

const toRecord = (row: IdempotencyRow): IdempotencyRecord => ({
  requestHash: row.request_hash,
  responseStatus: row.response_status,
  responseBody: row.response_body,
  claimId: row.claim_id,
});

/** Keys are per account and mode: a test key and a live key never see each other's. */
type KeySpace = EmailOwner;

/**
 * Claims the key for this request in one transaction: expired records are dropped, then the first
 * insert wins. Returns `claimed: true` for the winner, otherwise the record that holds the key.
 */
export async function claimIdempotencyKey(db: AccountSql, space: KeySpace, key: string, requestHash: string) {
  const test = space.test ? 1 : 0;
  const now = new Date();
  const claimId = newId('req');
  const [, , selected] = await db.batch([
    db
      .prepare('DELETE FROM idempotency_records WHERE account_id = ? AND test = ? AND idem_key = ? AND created_at < ?')
      .bind(space.accountId, test, key, nowIso(new Date(now.getTime() - IDEMPOTENCY_TTL_MS))),
    db
      .prepare(
        `INSERT INTO idempotency_records (account_id, test, idem_key, request_hash, claim_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .bind(space.accountId, test, key, requestHash, claimId, nowIso(now)),
    db
      .prepare(
        `SELECT request_hash, response_status, response_body, claim_id FROM idempotency_records
         WHERE account_id = ? AND test = ? AND idem_key = ?`,
      )
      .bind(space.accountId, test, key),
  ]);
  const record = toRecord(selected!.results[0] as IdempotencyRow);
  return { claimed: record.claimId === claimId, claimId, record };
}

export async function completeIdempotencyKey(
  db: AccountSql,
  space: KeySpace,
  key: string,
  claimId: string,
  status: number,
  body: string,
) {
  await db
    .prepare(
      `UPDATE idempotency_records SET response_status = ?, response_body = ?
       WHERE account_id = ? AND test = ? AND idem_key = ? AND claim_id = ?`,
    )
    .bind(status, body, space.accountId, space.test ? 1 : 0, key, claimId)
    .run();
}

/** The request failed: free the key so the client can retry with it. */
export async function abandonIdempotencyKey(db: AccountSql, space: KeySpace, key: string, claimId: string) {
  await db
    .prepare('DELETE FROM idempotency_records WHERE account_id = ? AND test = ? AND idem_key = ? AND claim_id = ?')
    .bind(space.accountId, space.test ? 1 : 0, key, claimId)
    .run();
}
