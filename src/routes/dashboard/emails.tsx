// Emails: the send log with the API's filters and cursor paging (one email's page is in email.tsx).
import type { Context } from 'hono';
import { When } from '../../dashboard/views/layout';
import { Pager, Table } from '../../dashboard/views/table';
import { pageRequest } from '../../schemas/common';
import { emailStatus, sendLogQuery } from '../../schemas/emails';
import { accountStore } from '../../store/account/client';
import type { EmailOwner } from '../../store/account/schedule';
import { invalidInput } from '../../validation';
import { type PageDeclaration, type PageEnv, render } from './page';

const PAGE_SIZE = 25;

/** Live mail unless the page or form says `mode=test`. */
export const ownerOf = (c: Context<PageEnv>, mode: string | undefined): EmailOwner => ({
  accountId: c.var.signedIn.accountId,
  test: mode === 'test',
});
export const modeQuery = (owner: EmailOwner) => (owner.test ? '?mode=test' : '');

export const StatusBadge = (props: { status: string }) => (
  <span class={`badge status-${props.status.toLowerCase()}`}>{props.status}</span>
);

async function listPage(c: Context<PageEnv>) {
  // A filter form sends its empty fields too: an empty one is no filter.
  const given = Object.entries(c.req.query()).filter(([, value]) => value !== '');
  const parsed = sendLogQuery.safeParse({ ...Object.fromEntries(given), limit: String(PAGE_SIZE) });
  if (!parsed.success) throw invalidInput(parsed.error);
  const { status, to, tag, ...paging } = parsed.data;
  const owner = ownerOf(c, c.req.query('mode'));
  const request = pageRequest(paging);
  const page = await accountStore(c.env, owner.accountId).listEmails(owner, request, { status, to, tag });
  const filters = new URLSearchParams({
    ...(owner.test ? { mode: 'test' } : {}),
    ...(status ? { status } : {}),
    ...(to ? { to } : {}),
    ...(tag ? { tag } : {}),
  });
  return render(
    c,
    'Emails',
    <>
      <h1>Emails</h1>
      <form class="inline panel" method="get" action="/dashboard/emails" aria-label="Filter the send log">
        {owner.test ? <input type="hidden" name="mode" value="test" /> : null}
        <label>
          Status
          <select name="status">
            <option value="">Any</option>
            {emailStatus.options.map((s) => (
              <option value={s} selected={s === status}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Recipient
          <input type="email" name="to" value={to ?? ''} />
        </label>
        <label>
          Tag (name:value)
          <input name="tag" value={tag ?? ''} />
        </label>
        <button type="submit">Filter</button>
        <a href={owner.test ? '/dashboard/emails' : '/dashboard/emails?mode=test'}>
          {owner.test ? 'Show live mail' : 'Show test mail'}
        </a>
      </form>
      <p class="muted">
        {page.total} {owner.test ? 'test' : 'live'} emails{status || to || tag ? ' match' : ''}, newest first.
      </p>
      <Table
        columns={['Created', 'To', 'Subject', 'Status']}
        rows={page.items.map((email) => [
          <When iso={email.createdAt} />,
          email.toAddresses.join(', '),
          <a href={`/dashboard/emails/${email.id}${modeQuery(owner)}`}>{email.subject || '(no subject)'}</a>,
          <StatusBadge status={email.status} />,
        ])}
        empty="No emails."
      />
      <Pager path="/dashboard/emails" query={filters} first={request.page === 1} next={page.nextCursor} />
    </>,
  );
}

export const emailPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/emails', access: 'read', handler: listPage },
];
