// Members: the operator adds an account's first owner; owners and admins manage the rest in the dashboard.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { admin, expectError, uniqueAddress, waitForInbox } from '../../support/api';
import { Browser, bareAccount, signedInMember } from '../../support/dashboard';

type MemberData = { id: string; email: string; role: string; createdAt: string; invitedBy: string | null };

const auditOf = async (accountId: string) =>
  (
    await env.DB.prepare('SELECT actor, action, target, detail FROM audit_log WHERE account_id = ? ORDER BY created_at')
      .bind(accountId)
      .all<{ actor: string; action: string; target: string; detail: string | null }>()
  ).results;

describe('POST /admin/v1/accounts/{accountId}/members', () => {
  it('201 with the member; the address is kept lower-cased; the audit log names the operator', async () => {
    const accountId = await bareAccount('members');
    const email = uniqueAddress('Owner').replace('owner', 'Owner');
    const res = await admin<MemberData>('POST', `/admin/v1/accounts/${accountId}/members`, { email, role: 'owner' });
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({
      id: expect.stringMatching(/^mem_[a-z2-7]{20}$/),
      email: email.toLowerCase(),
      role: 'owner',
      createdAt: expect.any(String),
      invitedBy: null,
    });
    expect(await auditOf(accountId)).toEqual([
      { actor: 'operator', action: 'member.added', target: email.toLowerCase(), detail: '{"role":"owner"}' },
    ]);
    const [invitation] = await waitForInbox(email.toLowerCase());
    expect(invitation!.text).toContain('You were added to members on postcode, as owner.');
  });

  it('409 MEMBER_EXISTS for an address that is a member already (in any case); one audit entry', async () => {
    const accountId = await bareAccount('members');
    const email = uniqueAddress('twice');
    expect((await admin('POST', `/admin/v1/accounts/${accountId}/members`, { email, role: 'viewer' })).status).toBe(
      201,
    );
    const again = await admin('POST', `/admin/v1/accounts/${accountId}/members`, {
      email: email.toUpperCase(),
      role: 'owner',
    });
    expectError(again, 409, 'MEMBER_EXISTS');
    expect(await auditOf(accountId)).toHaveLength(1);
  });

  it('the same address may be a member of two accounts', async () => {
    const email = uniqueAddress('both');
    for (const name of ['one', 'two']) {
      const accountId = await bareAccount(name);
      expect((await admin('POST', `/admin/v1/accounts/${accountId}/members`, { email, role: 'owner' })).status).toBe(
        201,
      );
    }
  });

  it('400 for another role or a bad address; 404 for an unknown account', async () => {
    const accountId = await bareAccount('members');
    const path = `/admin/v1/accounts/${accountId}/members`;
    expectError(await admin('POST', path, { email: uniqueAddress(), role: 'root' }), 400, 'INVALID_INPUT');
    expectError(await admin('POST', path, { email: 'nobody', role: 'viewer' }), 400, 'INVALID_INPUT');
    expectError(await admin('POST', path, { email: uniqueAddress(), role: 'viewer', extra: 1 }), 400, 'INVALID_INPUT');
    expectError(
      await admin('POST', '/admin/v1/accounts/acc_nosuchaccount/members', { email: uniqueAddress(), role: 'owner' }),
      404,
      'NOT_FOUND',
    );
  });
});

describe('GET /admin/v1/accounts/{accountId}/members', () => {
  it('200 with the members, newest first, paged', async () => {
    const accountId = await bareAccount('members');
    const added: string[] = [];
    for (const role of ['owner', 'developer', 'viewer']) {
      const res = await admin<MemberData>('POST', `/admin/v1/accounts/${accountId}/members`, {
        email: uniqueAddress(role),
        role,
      });
      added.push(res.json.data.id);
      await new Promise((r) => setTimeout(r, 5));
    }
    const res = await admin<{ members: MemberData[]; total: number; nextCursor: string | null }>(
      'GET',
      `/admin/v1/accounts/${accountId}/members?limit=2`,
    );
    expect(res.status).toBe(200);
    expect(res.json.data.total).toBe(3);
    expect(res.json.data.members.map((m) => m.id)).toEqual([added[2], added[1]]);
    const next = await admin<{ members: MemberData[] }>(
      'GET',
      `/admin/v1/accounts/${accountId}/members?limit=2&after=${res.json.data.nextCursor}`,
    );
    expect(next.json.data.members.map((m) => m.id)).toEqual([added[0]]);
  });
});

describe('GET /dashboard/members', () => {
  it('lists the members; an owner sees the add form and every control', async () => {
    const { browser, email } = await signedInMember('owner');
    const page = await browser.get('/dashboard/members');
    expect(page.status).toBe(200);
    expect(page.text).toContain(email);
    expect(page.text).toContain('action="/dashboard/members"');
    expect(page.text).toMatch(/action="\/dashboard\/members\/mem_[a-z2-7]+\/remove"/);
  });

  it('a viewer and a developer see the list and no control that changes it', async () => {
    for (const role of ['viewer', 'developer'] as const) {
      const { browser, email } = await signedInMember(role);
      const page = await browser.get('/dashboard/members');
      expect(page.status).toBe(200);
      expect(page.text).toContain(email);
      expect(page.text).not.toMatch(/action="\/dashboard\/members/);
    }
  });
});

describe('POST /dashboard/members', () => {
  it('an owner adds a member, who can then sign in; the audit log names the owner', async () => {
    const { browser, email, accountId, memberId } = await signedInMember('owner');
    const invitee = uniqueAddress('invitee');
    const res = await browser.post('/dashboard/members', { email: invitee, role: 'developer' });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/members?done=added');
    const page = await browser.get(res.location!);
    expect(page.text).toContain('Member added');
    expect(page.text).toContain(invitee);
    const listed = await admin<{ members: MemberData[] }>('GET', `/admin/v1/accounts/${accountId}/members`);
    expect(listed.json.data.members.find((m) => m.email === invitee)).toMatchObject({
      role: 'developer',
      invitedBy: memberId,
    });
    expect(await auditOf(accountId)).toContainEqual({
      actor: email,
      action: 'member.added',
      target: invitee,
      detail: '{"role":"developer"}',
    });
    const [invitation] = await waitForInbox(invitee);
    expect(invitation!.subject).toBe('You were added to dashboard owner on postcode');
    expect(invitation!.text).toContain(`${email} added you to dashboard owner on postcode, as developer.`);
    expect(invitation!.text).toContain('/dashboard/login');
    const theirs = new Browser();
    await theirs.signIn(invitee);
    expect((await theirs.get('/dashboard/members')).text).toContain(`${invitee}`);
  });

  it('an admin cannot make an owner (403 on the page); an owner can', async () => {
    const { browser, accountId } = await signedInMember('admin');
    const res = await browser.post('/dashboard/members', { email: uniqueAddress(), role: 'owner' });
    expect(res.status).toBe(403);
    expect(res.text).toContain('Only an owner can make or change an owner');
    const owner = await signedInMember('owner', accountId);
    expect((await owner.browser.post('/dashboard/members', { email: uniqueAddress(), role: 'owner' })).status).toBe(
      303,
    );
  });

  it('409 on the page for an address that is a member already; 400 for a bad address', async () => {
    const { browser, email } = await signedInMember('owner');
    const again = await browser.post('/dashboard/members', { email, role: 'viewer' });
    expect(again.status).toBe(409);
    expect(again.text).toContain('is a member already');
    const bad = await browser.post('/dashboard/members', { email: 'nope', role: 'viewer' });
    expect(bad.status).toBe(400);
  });

  it('a forged request from a viewer or a developer is refused with 403 and changes nothing', async () => {
    for (const role of ['viewer', 'developer'] as const) {
      const { browser, accountId } = await signedInMember(role);
      const res = await browser.post('/dashboard/members', { email: uniqueAddress(), role: 'viewer' });
      expect(res.status).toBe(403);
      expect(res.text).toContain(`Your role (${role}) cannot do this`);
      const listed = await admin<{ total: number }>('GET', `/admin/v1/accounts/${accountId}/members`);
      expect(listed.json.data.total).toBe(1);
    }
  });
});

describe('POST /dashboard/members/{memberId}/role', () => {
  it("changes a member's role; the account keeps its last owner (409)", async () => {
    const { browser, accountId, memberId } = await signedInMember('owner');
    const other = await signedInMember('viewer', accountId);
    expect((await browser.post(`/dashboard/members/${other.memberId}/role`, { role: 'admin' })).status).toBe(303);
    expect((await other.browser.get('/dashboard/members')).text).toContain('(admin)');
    const demote = await browser.post(`/dashboard/members/${memberId}/role`, { role: 'viewer' });
    expect(demote.status).toBe(409);
    expect(demote.text).toContain('must keep an owner');
    expect(await auditOf(accountId)).toContainEqual(
      expect.objectContaining({
        action: 'member.role_changed',
        target: other.email,
        detail: '{"from":"viewer","to":"admin"}',
      }),
    );
  });

  it("an admin cannot change an owner's role; a member of another account is not found", async () => {
    const owner = await signedInMember('owner');
    const adminMember = await signedInMember('admin', owner.accountId);
    expect(
      (await adminMember.browser.post(`/dashboard/members/${owner.memberId}/role`, { role: 'viewer' })).status,
    ).toBe(403);
    const stranger = await signedInMember('owner');
    expect((await stranger.browser.post(`/dashboard/members/${owner.memberId}/role`, { role: 'viewer' })).status).toBe(
      404,
    );
  });
});

describe('POST /dashboard/members/{memberId}/remove', () => {
  it('removes a member and ends their sessions; never the last owner', async () => {
    const { browser, accountId, memberId } = await signedInMember('owner');
    const other = await signedInMember('developer', accountId);
    expect((await browser.post(`/dashboard/members/${other.memberId}/remove`)).status).toBe(303);
    const theirs = await other.browser.get('/dashboard/members');
    expect(theirs.status).toBe(303);
    expect(theirs.location).toContain('/dashboard/login');
    const last = await browser.post(`/dashboard/members/${memberId}/remove`);
    expect(last.status).toBe(409);
    const live = await env.DB.prepare(
      'SELECT COUNT(*) AS n FROM dashboard_sessions WHERE member_id = ? AND revoked_at IS NULL',
    )
      .bind(other.memberId)
      .first<{ n: number }>();
    expect(live!.n).toBe(0);
  });
});

describe('POST /dashboard/members/{memberId}/sign-out', () => {
  it('signs a member out of every browser; they can sign in again', async () => {
    const { browser, accountId } = await signedInMember('admin');
    const other = await signedInMember('viewer', accountId);
    expect((await browser.post(`/dashboard/members/${other.memberId}/sign-out`)).status).toBe(303);
    expect((await other.browser.get('/dashboard/members')).status).toBe(303);
    await other.browser.signIn(other.email, 2);
    expect((await other.browser.get('/dashboard/members')).status).toBe(200);
  });
});
