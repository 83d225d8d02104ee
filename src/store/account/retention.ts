// Retention's view of D1: the oldest expired rows, found through the indexes of migrations/0001_init.sql,
// and deleted a bounded batch at a time. Never a QUEUED or SCHEDULED email, never a suppression.

import type { AccountSql } from './object-sql';

/** An email's final states. Its row changes no more once it has one, so `updated_at` is when it got there. */
const FINAL_EMAIL = `status IN ('SENT', 'FAILED', 'CANCELED', 'SUPPRESSED', 'DELIVERED', 'BOUNCED')`;

/**
 * The rows the statement before deleted, the counters' triggers left out (D1's `meta.changes` counts the
 * rows those triggers change too).
 */
const ROWS_DELETED = 'SELECT changes() AS n';

/** A batch of expired emails: their ids, and the R2 keys of their attachments. */
export type ExpiredEmails = { ids: string[]; objectKeys: string[] };

/**
 * Up to `limit` emails that reached a final state before `cutoff`, oldest first, through the partial index
 * named (INDEXED BY) so that the plan never rests on the planner's guess without statistics.
 */
export async function findExpiredEmails(db: AccountSql, cutoff: Date, limit: number): Promise<ExpiredEmails> {
  const rows = await db
    .prepare(
      `SELECT id, (SELECT json_group_array(r2_key) FROM email_attachments a WHERE a.email_id = emails.id) AS object_keys
       FROM emails INDEXED BY emails_final_updated WHERE ${FINAL_EMAIL} AND updated_at < ?1
       ORDER BY updated_at LIMIT ?2`,
    )
    .bind(cutoff.getTime(), limit)
    .all<{ id: string; object_keys: string }>();
  return {
    ids: rows.results.map((r) => r.id),
    objectKeys: rows.results.flatMap((r) => JSON.parse(r.object_keys) as string[]),
  };
}

/**
 * Deletes these emails with their recipients, timeline, tags and attachment metadata in one transaction.
 * Each statement checks again that the email is final and expired, so nothing else can be taken along.
 */
export async function deleteEmails(db: AccountSql, ids: string[], cutoff: Date): Promise<number> {
  // `+status`: looked up by id (the planner would otherwise walk every email of that status).
  const expired = `SELECT id FROM emails WHERE id IN (SELECT value FROM json_each(?1)) AND +${FINAL_EMAIL}
    AND updated_at < ?2`;
  const children = ['email_recipients', 'email_events', 'email_tags', 'email_attachments', 'email_bodies'];
  const results = await db.batch([
    ...children.map((table) =>
      db.prepare(`DELETE FROM ${table} WHERE email_id IN (${expired})`).bind(JSON.stringify(ids), cutoff.getTime()),
    ),
    db.prepare(`DELETE FROM emails WHERE id IN (${expired})`).bind(JSON.stringify(ids), cutoff.getTime()),
    db.prepare(ROWS_DELETED),
  ]);
  return (results.at(-1)!.results[0] as { n: number }).n;
}

/** A batch of expired received mail: its ids, and the R2 keys of its raw bytes and its attachments. */
export type ExpiredInbound = { ids: string[]; rawKeys: string[]; attachmentKeys: string[] };

/** Up to `limit` received messages older than `cutoff`, oldest first. */
export async function findExpiredInbound(db: AccountSql, cutoff: Date, limit: number): Promise<ExpiredInbound> {
  const rows = await db
    .prepare(
      'SELECT id, raw_key, attachments FROM inbound_messages WHERE received_at < ?1 ORDER BY received_at LIMIT ?2',
    )
    .bind(cutoff.getTime(), limit)
    .all<{ id: string; raw_key: string; attachments: string }>();
  return {
    ids: rows.results.map((r) => r.id),
    rawKeys: rows.results.map((r) => r.raw_key),
    attachmentKeys: rows.results.flatMap((r) => (JSON.parse(r.attachments) as { key: string }[]).map((a) => a.key)),
  };
}

/** Deletes these received messages (each checked again to be older than `cutoff`); how many. */
export async function deleteInbound(db: AccountSql, ids: string[], cutoff: Date): Promise<number> {
  const [, deleted] = await db.batch([
    db
      .prepare('DELETE FROM inbound_messages WHERE id IN (SELECT value FROM json_each(?1)) AND received_at < ?2')
      .bind(JSON.stringify(ids), cutoff.getTime()),
    db.prepare(ROWS_DELETED),
  ]);
  return (deleted!.results[0] as { n: number }).n;
}

/**
 * The other expiring rows: each kind with the time that ages it (and the condition of its partial index),
 * and how its table keeps that time (`clock`, as in src/db/paging.ts).
 */
const EXPIRING = {
  webhookDeliveries: {
    table: 'webhook_deliveries',
    where: `status IN ('delivered', 'failed')`,
    time: 'updated_at',
    clock: 'ms',
  },
  otpHistory: { table: 'otp_verifications', where: '1', time: 'verified_at', clock: 'ms' },
  otpOutcomes: { table: 'otp_outcomes', where: '1', time: 'ended_at', clock: 'ms' },
  idempotencyRecords: { table: 'idempotency_records', where: '1', time: 'created_at', clock: 'iso' },
} as const;

export type ExpiringRows = keyof typeof EXPIRING;

/** Deletes up to `limit` rows of this kind older than `cutoff`, oldest first; returns how many. */
export async function deleteExpiredRows(
  db: AccountSql,
  kind: ExpiringRows,
  cutoff: Date,
  limit: number,
): Promise<number> {
  const { table, where, time, clock } = EXPIRING[kind];
  const [, deleted] = await db.batch([
    db
      .prepare(
        `DELETE FROM ${table} WHERE rowid IN (
           SELECT rowid FROM ${table} WHERE ${where} AND ${time} < ?1 ORDER BY ${time} LIMIT ?2)`,
      )
      .bind(clock === 'ms' ? cutoff.getTime() : cutoff.toISOString(), limit),
    db.prepare(ROWS_DELETED),
  ]);
  return (deleted!.results[0] as { n: number }).n;
}
