import { newId, nowIso } from '../ids';

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

/**
 * Claims the key for this request in one transaction: expired records are dropped, then the first
 * insert wins. Returns `claimed: true` for the winner, otherwise the record that holds the key.
 */
export async function claimIdempotencyKey(db: D1Database, accountId: string, key: string, requestHash: string) {
  const now = new Date();
  const claimId = newId('req');
  const [, , selected] = await db.batch([
    db
      .prepare('DELETE FROM idempotency_records WHERE account_id = ? AND idem_key = ? AND created_at < ?')
      .bind(accountId, key, nowIso(new Date(now.getTime() - IDEMPOTENCY_TTL_MS))),
    db
      .prepare(
        `INSERT INTO idempotency_records (account_id, idem_key, request_hash, claim_id, created_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .bind(accountId, key, requestHash, claimId, nowIso(now)),
    db
      .prepare(
        'SELECT request_hash, response_status, response_body, claim_id FROM idempotency_records WHERE account_id = ? AND idem_key = ?',
      )
      .bind(accountId, key),
  ]);
  const record = toRecord(selected!.results[0] as IdempotencyRow);
  return { claimed: record.claimId === claimId, claimId, record };
}

export async function completeIdempotencyKey(
  db: D1Database,
  accountId: string,
  key: string,
  claimId: string,
  status: number,
  body: string,
) {
  await db
    .prepare(
      'UPDATE idempotency_records SET response_status = ?, response_body = ? WHERE account_id = ? AND idem_key = ? AND claim_id = ?',
    )
    .bind(status, body, accountId, key, claimId)
    .run();
}

/** The request failed: free the key so the client can retry with it. */
export async function abandonIdempotencyKey(db: D1Database, accountId: string, key: string, claimId: string) {
  await db
    .prepare('DELETE FROM idempotency_records WHERE account_id = ? AND idem_key = ? AND claim_id = ?')
    .bind(accountId, key, claimId)
    .run();
}
