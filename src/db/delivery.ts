// The delivery state of stored emails, as the queue consumer moves it: leases, outcomes, freeze holds.
import { nowIso } from '../ids';
import { type EmailRecord, type EmailRow, type EmailStatus, SELECT_EMAIL, toEmail } from './emails';

export type DeliveryOutcome = { id: string; status: EmailStatus; reply: string | null };

/**
 * Records delivery attempts, one transaction for a whole batch. Only a QUEUED row changes, so a
 * late or duplicate outcome can never turn SENT back into FAILED or the other way round; QUEUED
 * (a transient failure) keeps the row queued with its reply and frees the lease.
 */
export async function recordDeliveryOutcomes(db: D1Database, outcomes: DeliveryOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const now = nowIso();
  const statement = db.prepare(
    `UPDATE emails SET status = ?1, last_reply = ?2, attempts = attempts + 1, updated_at = ?3,
       lease_until = NULL, lease_owner = NULL, sent_at = CASE WHEN ?1 = 'SENT' THEN ?3 ELSE sent_at END
     WHERE id = ?4 AND status = 'QUEUED'`,
  );
  await db.batch(outcomes.map((o) => statement.bind(o.status, o.reply, now, o.id)));
}

/** Dead-lettered: retries are exhausted. The last transient reply stays on the row. */
export async function markUndeliverable(db: D1Database, id: string): Promise<void> {
  await db
    .prepare(
      `UPDATE emails SET status = 'FAILED', updated_at = ?,
         last_reply = COALESCE(last_reply, 'retries exhausted') WHERE id = ? AND status = 'QUEUED'`,
    )
    .bind(nowIso(), id)
    .run();
}

export type DeliveryClaim =
  | { kind: 'claimed'; email: EmailRecord }
  | { kind: 'done' } // unknown, SENT or FAILED: nothing to do
  | { kind: 'held' } // held for freeze mode: it is queued again on release
  | { kind: 'busy'; retryInSeconds: number }; // another consumer holds the lease

/**
 * Takes the delivery lease of QUEUED emails, so that two deliveries of the same queue message
 * (queues deliver at least once) cannot both send one. One round trip for the whole batch: the
 * update and the read run in one transaction.
 */
export async function claimForDelivery(
  db: D1Database,
  ids: string[],
  leaseSeconds: number,
): Promise<Map<string, DeliveryClaim>> {
  const now = new Date();
  const owner = crypto.randomUUID();
  const idList = JSON.stringify(ids);
  const [, selected] = await db.batch([
    db
      .prepare(
        `UPDATE emails SET lease_until = ?1, lease_owner = ?4
         WHERE id IN (SELECT value FROM json_each(?2)) AND status = 'QUEUED' AND held = 0
           AND (lease_until IS NULL OR lease_until < ?3)`,
      )
      .bind(nowIso(new Date(now.getTime() + leaseSeconds * 1000)), idList, nowIso(now), owner),
    db.prepare(`${SELECT_EMAIL} WHERE e.id IN (SELECT value FROM json_each(?))`).bind(idList),
  ]);
  type ClaimRow = EmailRow & { held: number; lease_until: string; lease_owner: string };
  const rows = new Map((selected!.results as ClaimRow[]).map((row) => [row.id, row]));
  const claims = new Map<string, DeliveryClaim>();
  for (const id of ids) {
    const row = rows.get(id);
    if (row?.status !== 'QUEUED') claims.set(id, { kind: 'done' });
    else if (row.held === 1) claims.set(id, { kind: 'held' });
    else if (row.lease_owner === owner) claims.set(id, { kind: 'claimed', email: toEmail(row) });
    else {
      const retryInSeconds = Math.max(Math.ceil((Date.parse(row.lease_until) - now.getTime()) / 1000), 1);
      claims.set(id, { kind: 'busy', retryInSeconds });
    }
  }
  return claims;
}

/** Freeze mode: park a NORMAL email until release. */
export async function holdEmail(db: D1Database, id: string): Promise<void> {
  await db
    .prepare(
      `UPDATE emails SET held = 1, lease_until = NULL, lease_owner = NULL, updated_at = ? WHERE id = ? AND status = 'QUEUED'`,
    )
    .bind(nowIso(), id)
    .run();
}
