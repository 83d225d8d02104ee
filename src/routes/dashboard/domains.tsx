// Domains and senders: the account's sending domains with the DNS records to publish (copy buttons), verify now,
// rotate the DKIM key, delete; and its single senders, confirmed by mail.
import type { Context } from 'hono';
import { config } from '../../config';
import { can } from '../../dashboard/roles';
import { ActionButtons, Csrf, Id, Notice, When } from '../../dashboard/views/layout';
import { SCRIPT_PATH } from '../../dashboard/views/script';
import { Table } from '../../dashboard/views/table';
import { domainRecords } from '../../mail/domain-check';
import { addDomain, domainNotFound, removeDomain, rotateDkim, verifyDomain } from '../../mail/domains';
import { addSender, removeSender, resendConfirmation } from '../../mail/sender-confirmation';
import { createDomainBody } from '../../schemas/domains';
import { createSenderBody } from '../../schemas/senders';
import { findDomain, listDomains } from '../../store/control/domains';
import { readOwnWrite, replicaReads } from '../../store/control/reads';
import { listSenders } from '../../store/control/senders';
import { invalidInput } from '../../validation';
import { act, formOnId, type PageDeclaration, type PageEnv, render } from './page';

const FIRST_100 = { limit: 100, page: 1, after: null };
const DONE: Record<string, string> = {
  added: 'Domain added: publish its records, then verify.',
  checked: 'Records checked.',
  rotated: 'A new DKIM key is pending: publish its record; the current one keeps signing meanwhile.',
  deleted: 'Domain deleted.',
  'sender-added': 'Sender added: a confirmation mail is on its way to it.',
  'sender-resent': 'Confirmation mailed again.',
  'sender-deleted': 'Sender deleted.',
};

/** A value with a button that copies it (shown once the page's script runs). */
const Copyable = (props: { value: string; label: string }) => (
  <span class="copyable">
    <code class="record">{props.value}</code>
    <button type="button" class="secondary small" data-copy={props.value} aria-label={`Copy ${props.label}`} hidden>
      Copy
    </button>
  </span>
);

async function listPage(c: Context<PageEnv>, notice?: unknown) {
  const { accountId, role } = c.var.signedIn;
  const reader = replicaReads(c.env.DB);
  const [domains, senders] = await Promise.all([
    listDomains(reader, accountId, FIRST_100),
    listSenders(reader, accountId, FIRST_100),
  ]);
  const writable = can(role, 'write');
  const { csrf } = c.var.frame;
  const done = DONE[c.req.query('done') ?? ''];
  return render(
    c,
    'Domains',
    <>
      <h1>Domains and senders</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <h2>Domains</h2>
      <Table
        columns={['Domain', 'Status', 'Added']}
        rows={domains.items.map((d) => [
          <a href={`/dashboard/domains/${d.id}`}>{d.name}</a>,
          <span class="badge">{d.status}</span>,
          <When iso={d.createdAt} />,
        ])}
        empty="No domains yet."
      />
      {writable ? (
        <form class="inline panel" method="post" action="/dashboard/domains">
          <Csrf token={csrf} />
          <label>
            Domain name
            <input name="name" required placeholder="mail.example.com" />
          </label>
          <button type="submit">Add domain</button>
        </form>
      ) : null}
      <h2>Senders</h2>
      <p class="muted">Single addresses you may send from without a domain, once their owner confirmed by mail.</p>
      <Table
        columns={['Address', 'Name', 'State', 'Added', ...(writable ? ['Actions'] : [])]}
        rows={senders.items.map((s) => [
          s.email,
          s.name ?? '',
          s.verified ? 'confirmed' : 'waiting for confirmation',
          <When iso={s.createdAt} />,
          ...(writable
            ? [
                <div class="actions">
                  {s.verified ? null : (
                    <form class="inline" method="post" action={`/dashboard/senders/${s.id}/resend`}>
                      <Csrf token={csrf} />
                      <button type="submit" class="secondary">
                        Mail again
                      </button>
                    </form>
                  )}
                  <form class="inline" method="post" action={`/dashboard/senders/${s.id}/delete`}>
                    <Csrf token={csrf} />
                    <button type="submit" class="danger" aria-label={`Delete the sender ${s.email}`}>
                      Delete
                    </button>
                  </form>
                </div>,
              ]
            : []),
        ])}
        empty="No senders."
      />
      {writable ? (
        <form class="inline panel" method="post" action="/dashboard/senders">
          <Csrf token={csrf} />
          <label>
            Address
            <input type="email" name="email" required />
          </label>
          <label>
            Name
            <input name="name" maxlength={200} />
          </label>
          <button type="submit">Add sender</button>
        </form>
      ) : null}
    </>,
  );
}

async function domainPage(c: Context<PageEnv>, notice?: unknown) {
  const { accountId, role } = c.var.signedIn;
  const id = c.req.param('id') ?? '';
  const domain = await readOwnWrite(c.env.DB, (db) => findDomain(db, accountId, id));
  if (!domain) throw domainNotFound();
  const records = domainRecords(domain, config(c.env).domains);
  const writable = can(role, 'write');
  const { csrf } = c.var.frame;
  const base = `/dashboard/domains/${domain.id}`;
  const done = DONE[c.req.query('done') ?? ''];
  return render(
    c,
    domain.name,
    <>
      <p>
        <a href="/dashboard/domains">← Domains</a>
      </p>
      <h1>{domain.name}</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <p class="muted">
        <Id value={domain.id} /> · <span class="badge">{domain.status}</span>
        {domain.checkedAt ? (
          <>
            {' '}
            · checked <When iso={domain.checkedAt} />
          </>
        ) : null}
      </p>
      <h2>DNS records to publish</h2>
      <Table
        columns={['Purpose', 'Type', 'Name', 'Value', 'Status']}
        rows={records.map((r) => [
          r.purpose,
          r.type,
          <Copyable value={r.name} label={`the name of the ${r.purpose} record`} />,
          <Copyable
            value={r.priority === undefined ? r.value : `${r.priority} ${r.value}`}
            label={`the value of the ${r.purpose} record`}
          />,
          <span class="badge">{r.status}</span>,
        ])}
      />
      {writable ? (
        <ActionButtons
          base={base}
          csrf={csrf}
          actions={[
            ['verify', 'Check the records now', 'secondary'],
            ['rotate', 'Rotate the DKIM key', 'secondary'],
            ['delete', 'Delete the domain', 'danger'],
          ]}
        />
      ) : null}
      <script src={SCRIPT_PATH} defer />
    </>,
  );
}

export const domainPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/domains', access: 'read', handler: (c) => listPage(c) },
  {
    method: 'post',
    path: '/dashboard/domains',
    access: 'write',
    handler: (c) => {
      let id = '';
      return act(
        c,
        async () => {
          const body = createDomainBody.safeParse({ name: c.var.form.get('name') ?? '' });
          if (!body.success) throw invalidInput(body.error);
          id = (await addDomain(c.env, c.var.signedIn.accountId, body.data.name)).id;
        },
        '/dashboard/domains?done=added',
        (notice) => listPage(c, notice),
        () => ({ action: 'domain.added', target: id }),
      );
    },
  },
  { method: 'get', path: '/dashboard/domains/:id', access: 'read', handler: (c) => domainPage(c) },
  formOnId(
    '/dashboard/domains/:id/verify',
    (c, id) => verifyDomain(c.env, c.var.signedIn.accountId, id),
    (id) => `/dashboard/domains/${id}?done=checked`,
    domainPage,
    'domain.checked',
  ),
  formOnId(
    '/dashboard/domains/:id/rotate',
    (c, id) => rotateDkim(c.env, c.var.signedIn.accountId, id),
    (id) => `/dashboard/domains/${id}?done=rotated`,
    domainPage,
    'domain.dkim_rotated',
  ),
  formOnId(
    '/dashboard/domains/:id/delete',
    (c, id) => removeDomain(c.env, c.var.signedIn.accountId, id),
    () => '/dashboard/domains?done=deleted',
    domainPage,
    'domain.deleted',
  ),
  {
    method: 'post',
    path: '/dashboard/senders',
    access: 'write',
    handler: (c) => {
      let id = '';
      return act(
        c,
        async () => {
          const form = c.var.form;
          const body = createSenderBody.safeParse({
            email: form.get('email') ?? '',
            ...(form.get('name') ? { name: form.get('name') } : {}),
          });
          if (!body.success) throw invalidInput(body.error);
          const { email, name } = body.data;
          id = (await addSender(c.env, c.var.signedIn.accountId, { email, name: name ?? null })).id;
        },
        '/dashboard/domains?done=sender-added',
        (notice) => listPage(c, notice),
        () => ({ action: 'sender.added', target: id }),
      );
    },
  },
  formOnId(
    '/dashboard/senders/:id/resend',
    (c, id) => resendConfirmation(c.env, c.var.signedIn.accountId, id),
    () => '/dashboard/domains?done=sender-resent',
    listPage,
    'sender.confirmation_resent',
  ),
  formOnId(
    '/dashboard/senders/:id/delete',
    (c, id) => removeSender(c.env, c.var.signedIn.accountId, id),
    () => '/dashboard/domains?done=sender-deleted',
    listPage,
    'sender.deleted',
  ),
];
