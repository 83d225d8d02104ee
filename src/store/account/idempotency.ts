import { nowIso } from '../../ids';
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

/** Thrown where an accept found the key's record written by another request meanwhile: that one is answered. */
export class KeyAlreadyUsed extends Error {
  constructor(readonly record: IdempotencyRecord) {
    super('Idempotency-Key: already used');
  }
}

/** The live record of a key (made within the last 24 h), or null. */
export async function findIdempotencyRecord(db: AccountSql, space: KeySpace, key: string) {
  const row = await db
    .prepare(
      `SELECT request_hash, response_status, response_body, claim_id FROM idempotency_records
       WHERE account_id = ? AND test = ? AND idem_key = ? AND created_at >= ?`,
    )
    .bind(space.accountId, space.test ? 1 : 0, key, nowIso(new Date(Date.now() - IDEMPOTENCY_TTL_MS)))
    .first<IdempotencyRow>();
  return row ? toRecord(row) : null;
}

/** What an accepted request stores under its key: its hash and the response it answered. */
export type IdempotentResponse = {
  space: KeySpace;
  key: string;
  requestHash: string;
  status: number;
  body: string;
};

/** Stores the response of a request under its key (replacing an expired record of the key). */
export async function recordIdempotentResponse(db: AccountSql, response: IdempotentResponse): Promise<void> {
  const { space, key } = response;
  await db
    .prepare(
      `INSERT OR REPLACE INTO idempotency_records
         (account_id, test, idem_key, request_hash, claim_id, response_status, response_body, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      space.accountId,
      space.test ? 1 : 0,
      key,
      response.requestHash,
      null,
      response.status,
      response.body,
      nowIso(),
    )
    .run();
}
