// Members: who signs in to the account and with which role; owners and admins add, change and remove them.
import type { Context } from 'hono';
import { z } from 'zod';
import { type Actor, addMember, changeRole, removeMember, signOutMember } from '../../dashboard/members';
import { can, canManageRole, ROLE_SUMMARY, ROLES, type Role } from '../../dashboard/roles';
import { Csrf, Notice, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import { ApiError } from '../../errors';
import { emailAddress } from '../../schemas/common';
import { listMembers, type Member } from '../../store/control/members';
import { act, formFields, type PageDeclaration, type PageEnv, render } from './page';

const role = z.enum(ROLES, { error: `expected one of ${ROLES.join(', ')}` });
const addForm = z.object({ email: emailAddress, role });
const roleForm = z.object({ role });

const DONE: Record<string, string> = {
  added: 'Member added: they can sign in with their address now.',
  role: 'Role changed.',
  removed: 'Member removed and signed out.',
  'signed-out': 'Member signed out of every browser.',
};

export const actorOf = (c: Context<PageEnv>): Actor => ({
  kind: 'member',
  email: c.var.signedIn.email,
  memberId: c.var.signedIn.memberId,
  role: c.var.signedIn.role,
});

const memberId = (c: Context<PageEnv>) => {
  const id = c.req.param('memberId');
  if (!id) throw new ApiError('MEMBER_NOT_FOUND', 'memberId: no such member of this account');
  return id;
};

function RoleSelect(props: { grantable: Role[]; selected: Role; label: string }) {
  return (
    <select name="role" aria-label={props.label}>
      {props.grantable.map((r) => (
        <option value={r} selected={r === props.selected}>
          {r}
        </option>
      ))}
    </select>
  );
}

/** A member's controls, for a role that may manage it. */
function MemberActions(props: { member: Member; viewer: Role; csrf: string }) {
  const { member, viewer, csrf } = props;
  if (!canManageRole(viewer, member.role)) return <span class="muted">—</span>;
  const base = `/dashboard/members/${member.id}`;
  return (
    <div class="actions">
      <form class="inline" method="post" action={`${base}/role`}>
        <Csrf token={csrf} />
        <RoleSelect
          grantable={ROLES.filter((r) => canManageRole(viewer, r))}
          selected={member.role}
          label={`Role of ${member.email}`}
        />
        <button type="submit" class="secondary">
          Change role
        </button>
      </form>
      <form class="inline" method="post" action={`${base}/sign-out`}>
        <Csrf token={csrf} />
        <button type="submit" class="secondary">
          Sign out everywhere
        </button>
      </form>
      <form class="inline" method="post" action={`${base}/remove`}>
        <Csrf token={csrf} />
        <button type="submit" class="danger">
          Remove
        </button>
      </form>
    </div>
  );
}

async function membersPage(c: Context<PageEnv>, notice?: unknown) {
  const { signedIn } = c.var;
  const { csrf } = c.var.frame;
  const members = await listMembers(c.env.DB, signedIn.accountId);
  const done = DONE[c.req.query('done') ?? ''];
  const manager = can(signedIn.role, 'manage_members');
  return render(
    c,
    'Members',
    <>
      <h1>Members</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      {manager ? (
        <section class="panel" aria-labelledby="add-member">
          <h2 id="add-member">Add a member</h2>
          <form class="inline" method="post" action="/dashboard/members">
            <Csrf token={csrf} />
            <label>
              Email address
              <input type="email" name="email" required autocomplete="off" />
            </label>
            <label>
              Role
              <select name="role" id="new-member-role">
                {ROLES.filter((r) => canManageRole(signedIn.role, r)).map((r) => (
                  <option value={r} selected={r === 'developer'}>
                    {r}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">Add member</button>
          </form>
        </section>
      ) : null}
      <Table
        columns={['Address', 'Role', 'Added', 'Actions']}
        rows={members.map((member) => [
          <>
            {member.email}
            {member.id === signedIn.memberId ? <span class="muted"> (you)</span> : null}
          </>,
          <span class="badge">{member.role}</span>,
          <When iso={member.createdAt} />,
          <MemberActions member={member} viewer={signedIn.role} csrf={csrf} />,
        ])}
      />
      <h2>Roles</h2>
      <ul>
        {ROLES.map((r) => (
          <li>
            <strong>{r}</strong>: {ROLE_SUMMARY[r]}
          </li>
        ))}
      </ul>
    </>,
  );
}

export const memberPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/members', access: 'read', handler: (c) => membersPage(c) },
  {
    method: 'post',
    path: '/dashboard/members',
    access: 'manage_members',
    handler: (c) =>
      act(
        c,
        () =>
          addMember(
            c.env,
            { id: c.var.signedIn.accountId, name: c.var.signedIn.accountName },
            actorOf(c),
            formFields(c, addForm),
          ),
        '/dashboard/members?done=added',
        (notice) => membersPage(c, notice),
      ),
  },
  {
    method: 'post',
    path: '/dashboard/members/:memberId/role',
    access: 'manage_members',
    handler: (c) =>
      act(
        c,
        () => changeRole(c.env.DB, c.var.signedIn.accountId, actorOf(c), memberId(c), formFields(c, roleForm).role),
        '/dashboard/members?done=role',
        (notice) => membersPage(c, notice),
      ),
  },
  {
    method: 'post',
    path: '/dashboard/members/:memberId/remove',
    access: 'manage_members',
    handler: (c) =>
      act(
        c,
        () => removeMember(c.env.DB, c.var.signedIn.accountId, actorOf(c), memberId(c)),
        '/dashboard/members?done=removed',
        (notice) => membersPage(c, notice),
      ),
  },
  {
    method: 'post',
    path: '/dashboard/members/:memberId/sign-out',
    access: 'manage_members',
    handler: (c) =>
      act(
        c,
        () => signOutMember(c.env.DB, c.var.signedIn.accountId, actorOf(c), memberId(c)),
        '/dashboard/members?done=signed-out',
        (notice) => membersPage(c, notice),
      ),
  },
];
