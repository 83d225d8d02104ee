// Sessions: the browsers signed in with your address (revocable), and the accounts your address is a member of.
import type { Context } from 'hono';
import { z } from 'zod';
import { Csrf, Notice, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import { ApiError } from '../../errors';
import { nowIso } from '../../ids';
import { liveSessionsOf, revokeSessionOf, switchSessionMember } from '../../store/control/dashboard-sessions';
import { membershipsOf } from '../../store/control/members';
import { act, formFields, type PageDeclaration, type PageEnv, render } from './page';

const switchForm = z.object({ memberId: z.string().max(64) });

const DONE: Record<string, string> = {
  revoked: 'Session signed out.',
  switched: 'Switched account.',
};

async function sessionsPage(c: Context<PageEnv>, notice?: unknown) {
  const { signedIn } = c.var;
  const { csrf } = c.var.frame;
  const [sessions, memberships] = await Promise.all([
    liveSessionsOf(c.env.DB, signedIn.email, nowIso()),
    membershipsOf(c.env.DB, signedIn.email),
  ]);
  const done = DONE[c.req.query('done') ?? ''];
  return render(
    c,
    'Sessions',
    <>
      <h1>Sessions</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <p class="muted">
        The browsers signed in as {signedIn.email}. A session lasts 30 days; sign out any you do not recognise.
      </p>
      <Table
        columns={['Signed in', 'Last seen', 'Browser', 'IP', 'Actions']}
        rows={sessions.map((session) => [
          <When iso={session.createdAt} />,
          <When iso={session.lastSeenAt} />,
          session.userAgent ?? '—',
          session.ip ?? '—',
          session.id === signedIn.id ? (
            <span class="badge">this browser</span>
          ) : (
            <form class="inline" method="post" action={`/dashboard/sessions/${session.id}/revoke`}>
              <Csrf token={csrf} />
              <button type="submit" class="danger">
                Sign out
              </button>
            </form>
          ),
        ])}
      />
      {memberships.length > 1 ? (
        <section class="panel" aria-labelledby="accounts">
          <h2 id="accounts">Your accounts</h2>
          <form class="inline" method="post" action="/dashboard/account">
            <Csrf token={csrf} />
            <label>
              Account
              <select name="memberId">
                {memberships.map((m) => (
                  <option value={m.id} selected={m.id === signedIn.memberId}>
                    {m.accountName} ({m.role})
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">Switch</button>
          </form>
        </section>
      ) : null}
    </>,
  );
}

export const sessionPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/sessions', access: 'read', handler: (c) => sessionsPage(c) },
  {
    method: 'post',
    path: '/dashboard/sessions/:sessionId/revoke',
    access: 'read',
    handler: (c) =>
      act(
        c,
        async () => {
          if (!(await revokeSessionOf(c.env.DB, c.var.signedIn.email, c.req.param('sessionId') ?? ''))) {
            throw new ApiError('NOT_FOUND', 'No such session of yours');
          }
        },
        '/dashboard/sessions?done=revoked',
        (notice) => sessionsPage(c, notice),
      ),
  },
  {
    method: 'post',
    path: '/dashboard/account',
    access: 'read',
    handler: (c) =>
      act(
        c,
        async () => {
          const { memberId } = formFields(c, switchForm);
          const memberships = await membershipsOf(c.env.DB, c.var.signedIn.email);
          if (!memberships.some((m) => m.id === memberId)) {
            throw new ApiError('MEMBER_NOT_FOUND', 'memberId: not a membership of your address');
          }
          await switchSessionMember(c.env.DB, c.var.signedIn.id, memberId);
        },
        '/dashboard/sessions?done=switched',
        (notice) => sessionsPage(c, notice),
      ),
  },
];
