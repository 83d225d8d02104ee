import type { Role } from '../../dashboard/roles';
import { newId, nowIso } from '../../ids';

/** A signed-in browser as the sessions page lists it. */
export type DashboardSession = {
  id: string;
  email: string;
  memberId: string;
  createdAt: string;
  expiresAt: string;
  lastSeenAt: string;
  userAgent: string | null;
  ip: string | null;
};

/** A live session with the membership it acts as: what every dashboard request resolves its cookie to. */
export type SignedIn = DashboardSession & { accountId: string; accountName: string; role: Role };

type SessionRow = {
  id: string;
  email: string;
  member_id: string;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
  user_agent: string | null;
  ip: string | null;
};

const COLUMNS = 's.id, s.email, s.member_id, s.created_at, s.expires_at, s.last_seen_at, s.user_agent, s.ip';

const toSession = (row: SessionRow): DashboardSession => ({
  id: row.id,
  email: row.email,
  memberId: row.member_id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastSeenAt: row.last_seen_at,
  userAgent: row.user_agent,
  ip: row.ip,
});

/** A new session and the statement storing it (its token only as a hash). */
export function insertSessionStatement(
  db: D1Database,
  fields: {
    tokenHash: string;
    email: string;
    memberId: string;
    expiresAt: string;
    userAgent: string | null;
    ip: string | null;
  },
) {
  const now = nowIso();
  const { tokenHash, ...shown } = fields;
  const session: DashboardSession = { id: newId('dss'), createdAt: now, lastSeenAt: now, ...shown };
  const statement = db
    .prepare(
      `INSERT INTO dashboard_sessions (id, token_hash, email, member_id, created_at, expires_at, last_seen_at, user_agent, ip)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      session.id,
      tokenHash,
      session.email,
      session.memberId,
      now,
      session.expiresAt,
      now,
      session.userAgent,
      session.ip,
    );
  return { session, statement };
}

/** The live session of a token's hash, with its membership (a removed member's session finds nothing). */
export async function findSignedIn(db: D1Database, tokenHash: string, now: string): Promise<SignedIn | null> {
  const row = await db
    .prepare(
      `SELECT ${COLUMNS}, m.account_id, m.role, a.name AS account_name
         FROM dashboard_sessions s JOIN members m ON m.id = s.member_id JOIN accounts a ON a.id = m.account_id
        WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ?`,
    )
    .bind(tokenHash, now)
    .first<SessionRow & { account_id: string; role: Role; account_name: string }>();
  if (!row) return null;
  return { ...toSession(row), accountId: row.account_id, accountName: row.account_name, role: row.role };
}

/** The live sessions of an address (every membership of it), newest first. */
export async function liveSessionsOf(db: D1Database, email: string, now: string): Promise<DashboardSession[]> {
  const { results } = await db
    .prepare(
      `SELECT ${COLUMNS} FROM dashboard_sessions s
        WHERE s.email = ? AND s.revoked_at IS NULL AND s.expires_at > ? ORDER BY s.created_at DESC, s.id DESC`,
    )
    .bind(email, now)
    .all<SessionRow>();
  return results.map(toSession);
}

/** Revokes one of an address's sessions; whether a live one was revoked. */
export async function revokeSessionOf(db: D1Database, email: string, sessionId: string): Promise<boolean> {
  const { meta } = await db
    .prepare('UPDATE dashboard_sessions SET revoked_at = ? WHERE id = ? AND email = ? AND revoked_at IS NULL')
    .bind(nowIso(), sessionId, email)
    .run();
  return meta.changes > 0;
}

/** Revokes the session of a token's hash (sign-out). */
export const revokeSessionByToken = (db: D1Database, tokenHash: string) =>
  db
    .prepare('UPDATE dashboard_sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL')
    .bind(nowIso(), tokenHash)
    .run();

/**
 * Statement: revokes every session acting as a member (signed out by an admin); `ifRemoved`: only once the
 * member's row is gone (after a guarded removal in the same batch).
 */
export const revokeMemberSessionsStatement = (db: D1Database, memberId: string, ifRemoved = false) =>
  db
    .prepare(
      `UPDATE dashboard_sessions SET revoked_at = ?1 WHERE member_id = ?2 AND revoked_at IS NULL
       ${ifRemoved ? 'AND NOT EXISTS (SELECT 1 FROM members WHERE id = ?2)' : ''}`,
    )
    .bind(nowIso(), memberId);

/** Moves a session to another membership of its own address (the account switcher). */
export const switchSessionMember = (db: D1Database, sessionId: string, memberId: string) =>
  db.prepare('UPDATE dashboard_sessions SET member_id = ? WHERE id = ?').bind(memberId, sessionId).run();

/** Records that a session was seen (called at most every ten minutes per session). */
export const touchSession = (db: D1Database, sessionId: string, at: string) =>
  db.prepare('UPDATE dashboard_sessions SET last_seen_at = ? WHERE id = ?').bind(at, sessionId).run();
