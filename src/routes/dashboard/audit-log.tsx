// The audit log: who did what in the account, newest first, 50 to a page.

import { Id, isId, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import { pageQuery, pageRequest } from '../../schemas/common';
import { listAuditLog } from '../../store/control/audit-log';
import { replicaReads } from '../../store/control/reads';
import { invalidInput } from '../../validation';
import type { PageDeclaration } from './page';
import { render } from './page';

const AUDIT_PAGE = 50;

/** An entry's detail as `key: value` pairs. */
const detailText = (detail: Record<string, unknown> | null) =>
  detail
    ? Object.entries(detail)
        .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
        .join(', ')
    : '';

export const auditPages: PageDeclaration[] = [
  {
    method: 'get',
    path: '/dashboard/audit-log',
    access: 'read',
    handler: async (c) => {
      const query = pageQuery.safeParse({ ...c.req.query(), limit: String(AUDIT_PAGE) });
      if (!query.success) throw invalidInput(query.error);
      const request = pageRequest(query.data);
      const page = await listAuditLog(replicaReads(c.env.DB), c.var.signedIn.accountId, request);
      return render(
        c,
        'Audit log',
        <>
          <h1>Audit log</h1>
          <p class="muted">
            {page.total} entries. Who did what in this account: members in the dashboard, and the operator.
          </p>
          <Table
            columns={['When', 'Who', 'What', 'On', 'Detail']}
            rows={page.items.map((entry) => [
              <When iso={entry.createdAt} seconds />,
              entry.actor,
              <code>{entry.action}</code>,
              entry.target && isId(entry.target) ? <Id value={entry.target} /> : (entry.target ?? ''),
              detailText(entry.detail),
            ])}
            empty="Nothing yet."
          />
          <nav class="pager" aria-label="Pages">
            {request.page > 1 ? <a href="/dashboard/audit-log">Newest</a> : null}
            {page.nextCursor ? <a href={`/dashboard/audit-log?after=${page.nextCursor}`}>Older</a> : null}
          </nav>
        </>,
      );
    },
  },
];
