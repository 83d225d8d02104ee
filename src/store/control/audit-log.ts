import { newId, nowIso } from '../../ids';
import { accountRowsNewestFirst } from '../paging';

/** One thing someone did in an account. `actor`: a member's address, or `operator` (the admin API). */
export type AuditEntry = {
  id: string;
  accountId: string;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown> | null;
  createdAt: string;
};

export type AuditFact = Pick<AuditEntry, 'actor' | 'action'> & {
  target?: string | null;
  detail?: Record<string, unknown>;
};

type AuditRow = {
  id: string;
  account_id: string;
  actor: string;
  action: string;
  target: string | null;
  detail: string | null;
  created_at: string;
};

const toEntry = (row: AuditRow): AuditEntry => ({
  id: row.id,
  accountId: row.account_id,
  actor: row.actor,
  action: row.action,
  target: row.target,
  detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
  createdAt: row.created_at,
});

/** The statement recording a fact when `condition` holds. */
const auditInsert = (db: D1Database, accountId: string, fact: AuditFact, condition: string) =>
  db
    .prepare(
      `INSERT INTO audit_log (id, account_id, actor, action, target, detail, created_at)
       SELECT ?, ?, ?, ?, ?, ?, ? WHERE ${condition}`,
    )
    .bind(
      newId('aud'),
      accountId,
      fact.actor,
      fact.action,
      fact.target ?? null,
      fact.detail ? JSON.stringify(fact.detail) : null,
      nowIso(),
    );

/**
 * Statement: records a fact, right after the statement of the change it describes in the same batch (one
 * transaction), and only if that statement changed a row: a change refused by its guard leaves no entry.
 */
export const auditStatement = (db: D1Database, accountId: string, fact: AuditFact) =>
  auditInsert(db, accountId, fact, 'changes() > 0');

/** Records a fact on its own, after the change it describes succeeded (a change with a transaction of its own). */
export const recordAudit = (db: D1Database, accountId: string, fact: AuditFact) =>
  auditInsert(db, accountId, fact, '1').run();

/** Pages of an account's audit log, newest first. */
export const listAuditLog = accountRowsNewestFirst<AuditRow, AuditEntry>(
  'audit_log',
  'id, account_id, actor, action, target, detail, created_at',
  toEntry,
);
