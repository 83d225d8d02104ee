// The audit log: who did what in the account, newest first, 50 to a page.
import { listAuditLog } from '../../db/audit-log';
import { replicaReads } from '../../db/reads';
import { pageQuery, pageRequest } from '../../schemas/common';
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
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">When (UTC)</th>
                  <th scope="col">Who</th>
                  <th scope="col">What</th>
                  <th scope="col">On</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((entry) => (
                  <tr>
                    <td>{entry.createdAt.slice(0, 19).replace('T', ' ')}</td>
                    <td>{entry.actor}</td>
                    <td>
                      <code>{entry.action}</code>
                    </td>
                    <td>{entry.target ?? ''}</td>
                    <td>{detailText(entry.detail)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav class="pager" aria-label="Pages">
            {request.page > 1 ? <a href="/dashboard/audit-log">Newest</a> : null}
            {page.nextCursor ? <a href={`/dashboard/audit-log?after=${page.nextCursor}`}>Older</a> : null}
          </nav>
        </>,
      );
    },
  },
];
