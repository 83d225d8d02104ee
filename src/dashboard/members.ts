// An account's members: added by the operator (the first owner) or by owners and admins in the dashboard.
// Each change and its audit entry are one D1 transaction.

import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { auditStatement } from '../store/control/audit-log';
import { revokeMemberSessionsStatement } from '../store/control/dashboard-sessions';
import {
  deleteMemberStatement,
  findMember,
  insertMemberStatement,
  type Member,
  updateRoleStatement,
} from '../store/control/members';
import { mailInvitation } from './invitation';
import { canManageRole, type Role } from './roles';
import { memberAddress } from './sign-in';

/** Who acts: the operator (admin API), or a signed-in member with its role. */
export type Actor = { kind: 'operator' } | { kind: 'member'; email: string; memberId: string; role: Role };

export const actorName = (actor: Actor) => (actor.kind === 'operator' ? 'operator' : actor.email);

function checkRole(actor: Actor, role: Role) {
  if (actor.kind === 'member' && !canManageRole(actor.role, role)) {
    throw new ApiError('ROLE_REQUIRED', `Only an owner can make or change an owner; your role is ${actor.role}`);
  }
}

async function requireMember(db: D1Database, accountId: string, memberId: string) {
  const member = await findMember(db, accountId, memberId);
  if (!member) throw new ApiError('MEMBER_NOT_FOUND', 'memberId: no such member of this account');
  return member;
}

const lastOwner = () => new ApiError('LAST_OWNER', 'The account must keep an owner: make another member owner first');

/**
 * Adds a member who signs in with `email`, and mails them where; 409 MEMBER_EXISTS when the address is one
 * already.
 */
export async function addMember(
  env: Bindings,
  account: { id: string; name: string },
  actor: Actor,
  request: { email: string; role: Role },
): Promise<Member> {
  const { DB: db } = env;
  const accountId = account.id;
  checkRole(actor, request.role);
  const email = memberAddress(request.email);
  const invitedBy = actor.kind === 'member' ? actor.memberId : null;
  const { member, statement } = insertMemberStatement(db, { accountId, email, role: request.role, invitedBy });
  const fact = { actor: actorName(actor), action: 'member.added', target: email, detail: { role: request.role } };
  const [inserted] = await db.batch([statement, auditStatement(db, accountId, fact)]);
  if (inserted!.results.length === 0) throw new ApiError('MEMBER_EXISTS', `email: ${email} is a member already`);
  await mailInvitation(env, { email, role: request.role, accountName: account.name, invitedBy: actorName(actor) });
  return member;
}

/** Gives a member another role (an owner's role, or the owner role, only by an owner; one owner stays). */
export async function changeRole(db: D1Database, accountId: string, actor: Actor, memberId: string, role: Role) {
  const member = await requireMember(db, accountId, memberId);
  checkRole(actor, member.role);
  checkRole(actor, role);
  const fact = {
    actor: actorName(actor),
    action: 'member.role_changed',
    target: member.email,
    detail: { from: member.role, to: role },
  };
  const [updated] = await db.batch([
    updateRoleStatement(db, accountId, memberId, role),
    auditStatement(db, accountId, fact),
  ]);
  if (updated!.results.length === 0) throw lastOwner();
}

/** Removes a member and signs out its sessions (never the account's last owner). */
export async function removeMember(db: D1Database, accountId: string, actor: Actor, memberId: string) {
  const member = await requireMember(db, accountId, memberId);
  checkRole(actor, member.role);
  const fact = {
    actor: actorName(actor),
    action: 'member.removed',
    target: member.email,
    detail: { role: member.role },
  };
  const [deleted] = await db.batch([
    deleteMemberStatement(db, accountId, memberId),
    auditStatement(db, accountId, fact),
    revokeMemberSessionsStatement(db, memberId, true),
  ]);
  if (deleted!.results.length === 0) throw lastOwner();
}

/** Signs a member out of every browser. */
export async function signOutMember(db: D1Database, accountId: string, actor: Actor, memberId: string) {
  const member = await requireMember(db, accountId, memberId);
  checkRole(actor, member.role);
  const fact = { actor: actorName(actor), action: 'member.signed_out', target: member.email };
  await db.batch([revokeMemberSessionsStatement(db, memberId), auditStatement(db, accountId, fact)]);
}
