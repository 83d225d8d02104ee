import type { Role } from '../../dashboard/roles';
import { newId, nowIso } from '../../ids';
import { accountRowsNewestFirst } from '../paging';

export type Member = {
  id: string;
  accountId: string;
  email: string;
  role: Role;
  createdAt: string;
  invitedBy: string | null;
};

type MemberRow = {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  created_at: string;
  invited_by: string | null;
};

const COLUMNS = 'id, account_id, email, role, created_at, invited_by';

const toMember = (row: MemberRow): Member => ({
  id: row.id,
  accountId: row.account_id,
  email: row.email,
  role: row.role,
  createdAt: row.created_at,
  invitedBy: row.invited_by,
});

/** A new member and the statement adding it (it adds nothing when the address is a member already). */
export function insertMemberStatement(
  db: D1Database,
  member: { accountId: string; email: string; role: Role; invitedBy: string | null },
) {
  const row: Member = { id: newId('mem'), createdAt: nowIso(), ...member };
  const statement = db
    .prepare(
      `INSERT INTO members (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, email) DO NOTHING RETURNING id`,
    )
    .bind(row.id, row.accountId, row.email, row.role, row.createdAt, row.invitedBy);
  return { member: row, statement };
}

export async function findMember(db: D1Database, accountId: string, memberId: string): Promise<Member | null> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM members WHERE account_id = ? AND id = ?`)
    .bind(accountId, memberId)
    .first<MemberRow>();
  return row ? toMember(row) : null;
}

/** Every membership of an address, oldest first. */
export async function membershipsOf(db: D1Database, email: string): Promise<(Member & { accountName: string })[]> {
  const { results } = await db
    .prepare(
      `SELECT m.id, m.account_id, m.email, m.role, m.created_at, m.invited_by, a.name AS account_name
         FROM members m JOIN accounts a ON a.id = m.account_id WHERE m.email = ? ORDER BY m.created_at, m.id`,
    )
    .bind(email)
    .all<MemberRow & { account_name: string }>();
  return results.map((row) => ({ ...toMember(row), accountName: row.account_name }));
}

/** The account's members, oldest first (a team, not a log: no paging). */
export async function listMembers(db: D1Database, accountId: string): Promise<Member[]> {
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM members WHERE account_id = ? ORDER BY created_at, id`)
    .bind(accountId)
    .all<MemberRow>();
  return results.map(toMember);
}

/** Statements: the role of a member, guarded so that the account keeps an owner. */
export const updateRoleStatement = (db: D1Database, accountId: string, memberId: string, role: Role) =>
  db
    .prepare(
      `UPDATE members SET role = ?3 WHERE account_id = ?1 AND id = ?2
         AND (?3 = 'owner' OR role != 'owner'
              OR (SELECT COUNT(*) FROM members WHERE account_id = ?1 AND role = 'owner') > 1)
       RETURNING id`,
    )
    .bind(accountId, memberId, role);

/** Statement: removes a member unless it is the account's last owner. */
export const deleteMemberStatement = (db: D1Database, accountId: string, memberId: string) =>
  db
    .prepare(
      `DELETE FROM members WHERE account_id = ?1 AND id = ?2
         AND (role != 'owner' OR (SELECT COUNT(*) FROM members WHERE account_id = ?1 AND role = 'owner') > 1)
       RETURNING id`,
    )
    .bind(accountId, memberId);

/** Pages of an account's members, newest first (the operator's list). */
export const pageMembers = accountRowsNewestFirst<MemberRow, Member>('members', COLUMNS, toMember);
