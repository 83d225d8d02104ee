// Suppressions: the addresses the account's mail skips, why and until when; add one, lift one.
import type { Context } from 'hono';
import { z } from 'zod';
import { can } from '../../dashboard/roles';
import { Csrf, Notice, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import { suppress, unsuppress } from '../../mail/suppressions';
import { emailAddress, label, pageQuery, pageRequest } from '../../schemas/common';
import { addSuppressionBody } from '../../schemas/suppressions';
import { accountStore } from '../../store/account/client';
import { invalidInput } from '../../validation';
import { act, formFields, type PageDeclaration, type PageEnv, render } from './page';

const PAGE_SIZE = 50;
const DONE: Record<string, string> = { added: 'Address suppressed.', removed: 'Suppression lifted.' };

/** The form's fields as the API's body: an empty note or expiry is none; the expiry is a UTC `datetime-local`. */
const addForm = z
  .object({
    email: z.string(),
    note: z.string().optional(),
    expiresAt: z.string().optional(),
  })
  .transform((f) => ({
    email: f.email,
    ...(f.note ? { note: f.note } : {}),
    ...(f.expiresAt ? { expiresAt: `${f.expiresAt}:00.000Z` } : {}),
  }))
  .pipe(addSuppressionBody);
const removeForm = z.object({ email: emailAddress });

async function suppressionsPage(c: Context<PageEnv>, notice?: unknown) {
  const parsed = pageQuery.safeParse({ ...c.req.query(), limit: String(PAGE_SIZE) });
  if (!parsed.success) throw invalidInput(parsed.error);
  const request = pageRequest(parsed.data);
  const page = await accountStore(c.env, c.var.signedIn.accountId).listSuppressions(c.var.signedIn.accountId, request);
  const writable = can(c.var.signedIn.role, 'write');
  const { csrf } = c.var.frame;
  const done = DONE[c.req.query('done') ?? ''];
  const now = new Date().toISOString();
  return render(
    c,
    'Suppressions',
    <>
      <h1>Suppressions</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <p class="muted">
        {page.total} addresses. Mail to a suppressed address is not sent (SUPPRESSED); one-time codes ignore the list.
      </p>
      {writable ? (
        <section class="panel" aria-labelledby="add-suppression">
          <h2 id="add-suppression">Suppress an address</h2>
          <form class="inline" method="post" action="/dashboard/suppressions">
            <Csrf token={csrf} />
            <label>
              Email address
              <input type="email" name="email" required />
            </label>
            <label>
              Note
              <input name="note" maxlength={label.maxLength ?? 200} />
            </label>
            <label>
              Until (UTC, optional)
              <input type="datetime-local" name="expiresAt" />
            </label>
            <button type="submit">Suppress</button>
          </form>
        </section>
      ) : null}
      <Table
        columns={['Address', 'Reason', 'Note', 'Email', 'Until', 'Added', ...(writable ? ['Actions'] : [])]}
        rows={page.items.map((s) => [
          s.email,
          <span class="badge">{s.reason}</span>,
          s.note ?? '',
          s.emailId ? <a href={`/dashboard/emails/${s.emailId}`}>{s.emailId}</a> : '',
          s.expiresAt ? (
            <>
              <When iso={s.expiresAt} />
              {s.expiresAt <= now ? ' (expired)' : ''}
            </>
          ) : (
            'for good'
          ),
          <When iso={s.createdAt} />,
          ...(writable
            ? [
                <form class="inline" method="post" action="/dashboard/suppressions/remove">
                  <Csrf token={csrf} />
                  <input type="hidden" name="email" value={s.email} />
                  <button type="submit" class="danger" aria-label={`Lift the suppression of ${s.email}`}>
                    Lift
                  </button>
                </form>,
              ]
            : []),
        ])}
        empty="No suppressed addresses."
      />
      <nav class="pager" aria-label="Pages">
        {request.page > 1 ? <a href="/dashboard/suppressions">First</a> : null}
        {page.nextCursor ? <a href={`/dashboard/suppressions?after=${page.nextCursor}`}>Next</a> : null}
      </nav>
    </>,
  );
}

export const suppressionPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/suppressions', access: 'read', handler: (c) => suppressionsPage(c) },
  {
    method: 'post',
    path: '/dashboard/suppressions',
    access: 'write',
    handler: (c) => {
      let email = '';
      return act(
        c,
        async () => {
          const body = formFields(c, addForm);
          email = (await suppress(c.env, c.var.signedIn.accountId, body)).email;
        },
        '/dashboard/suppressions?done=added',
        (notice) => suppressionsPage(c, notice),
        () => ({ action: 'suppression.added', target: email }),
      );
    },
  },
  {
    method: 'post',
    path: '/dashboard/suppressions/remove',
    access: 'write',
    handler: (c) => {
      let email = '';
      return act(
        c,
        async () => {
          email = await unsuppress(c.env, c.var.signedIn.accountId, formFields(c, removeForm).email);
        },
        '/dashboard/suppressions?done=removed',
        (notice) => suppressionsPage(c, notice),
        () => ({ action: 'suppression.removed', target: email }),
      );
    },
  },
];
