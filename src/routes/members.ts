import { operator } from '../auth/guards';
import { addMember } from '../dashboard/members';
import { accountIdParam } from '../schemas/admin';
import { pageQuery } from '../schemas/common';
import { createMemberBody, memberListResponse, memberResponse } from '../schemas/members';
import { type Member, pageMembers } from '../store/control/members';
import { requireAccount } from './admin';
import { listed, type PageRead } from './admin-lists';
import { json, ok, route, router } from './route';

const MEMBER = {
  id: 'mem_k3q7zm2xf4ncd5ty8hbw',
  email: 'ada@acme.example',
  role: 'owner' as const,
  createdAt: '2026-11-26T09:00:00.000Z',
  invitedBy: null,
};
const common = { tag: 'Operator', guard: operator, params: accountIdParam } as const;

const createMemberRoute = route({
  ...common,
  method: 'post',
  path: '/admin/v1/accounts/{accountId}/members',
  summary: 'Add a dashboard member (the first owner)',
  description:
    'The member signs in at /dashboard/login with a code mailed to this address. Owners and admins add the others in the dashboard. 409 MEMBER_EXISTS when the address is a member of the account already.',
  body: createMemberBody,
  bodyExample: { email: 'ada@acme.example', role: 'owner' },
  success: { status: 201, content: json(memberResponse, { success: true, data: MEMBER }) },
  errors: ['NOT_FOUND', 'MEMBER_EXISTS'],
});

const listMembersRoute = route({
  ...common,
  method: 'get',
  path: '/admin/v1/accounts/{accountId}/members',
  summary: "List an account's dashboard members",
  query: pageQuery,
  success: {
    status: 200,
    content: json(memberListResponse, {
      success: true,
      data: { members: [MEMBER], total: 1, page: 1, totalPages: 1, nextCursor: null },
    }),
  },
  errors: ['NOT_FOUND'],
});

const memberView = (m: Member) => ({
  id: m.id,
  email: m.email,
  role: m.role,
  createdAt: m.createdAt,
  invitedBy: m.invitedBy,
});

/** The operator's door to the dashboard: an account's first owner. */
export const memberRoutes = router()
  .openapi(createMemberRoute, async (c) => {
    const account = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const member = await addMember(c.env, account, { kind: 'operator' }, c.req.valid('json'));
    return ok(c, memberView(member), 201);
  })
  .openapi(listMembersRoute, async (c) => {
    const { id } = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const read: PageRead<Member> = (request) => pageMembers(c.env.DB, id, request);
    return c.json(await listed('members', c.req.valid('query'), read, memberView), 200);
  });
