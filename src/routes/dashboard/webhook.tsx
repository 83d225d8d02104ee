// One webhook endpoint: edit it, rotate its secret, send a test event, delete it; its delivery log with each
// request and the answer it got, and a retry.
import type { Context } from 'hono';
import { can } from '../../dashboard/roles';
import { ActionButtons, Csrf, Id, Notice, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import { pageQuery, pageRequest } from '../../schemas/common';
import { updateWebhookBody } from '../../schemas/webhooks';
import { accountStore } from '../../store/account/client';
import type { WebhookDelivery } from '../../store/account/webhook-deliveries';
import { invalidInput } from '../../validation';
import { changeEndpoint, ownEndpoint, removeEndpoint, retryDelivery, sendTestEvent } from '../../webhooks/endpoints';
import { act, formOnId, type PageDeclaration, type PageEnv, render } from './page';
import { audit, DONE, EndpointForm, endpointFields, withSecret } from './webhooks';

/** The last answer: its status or error, and its body when it had one. */
function Answer(props: { delivery: WebhookDelivery }) {
  const { lastStatus, lastError, lastResponse } = props.delivery;
  const summary = [lastStatus === null ? '' : `HTTP ${lastStatus}`, lastError ?? ''].filter(Boolean).join(' · ');
  if (!lastResponse) return <>{summary || '—'}</>;
  return (
    <details>
      <summary>{summary}</summary>
      <pre class="text-body">{lastResponse}</pre>
    </details>
  );
}

async function endpointPage(c: Context<PageEnv>, notice?: unknown) {
  const { accountId, role } = c.var.signedIn;
  const endpoint = await ownEndpoint(c.env, accountId, c.req.param('id') ?? '');
  const parsed = pageQuery.safeParse({ ...c.req.query(), limit: '25' });
  if (!parsed.success) throw invalidInput(parsed.error);
  const request = pageRequest(parsed.data);
  const deliveries = await accountStore(c.env, accountId).listDeliveries(endpoint.id, request);
  const writable = can(role, 'write');
  const { csrf } = c.var.frame;
  const base = `/dashboard/webhooks/${endpoint.id}`;
  const done = DONE[c.req.query('done') ?? ''];
  return render(
    c,
    'Webhook',
    <>
      <p>
        <a href="/dashboard/webhooks">← Webhooks</a>
      </p>
      <h1>{endpoint.description ?? endpoint.url}</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <p class="muted">
        <Id value={endpoint.id} /> · {endpoint.url} · {endpoint.enabled ? 'enabled' : 'disabled'}
      </p>
      {writable ? (
        <>
          <EndpointForm endpoint={endpoint} action={base} csrf={csrf} label="Save" />
          <ActionButtons
            base={base}
            csrf={csrf}
            actions={[
              ['test', 'Send a test event', 'secondary'],
              ['rotate', 'Rotate the signing secret', 'secondary'],
              ['delete', 'Delete the endpoint', 'danger'],
            ]}
          />
        </>
      ) : (
        <p>Events: {endpoint.events.join(', ')}</p>
      )}
      <h2>Deliveries</h2>
      <p class="muted">
        {deliveries.total} deliveries, newest first, with each one's last answer (the first 2 KB of its body).
      </p>
      <Table
        columns={['Event', 'Status', 'Attempts', 'Answer', 'Created', 'Request', ...(writable ? ['Actions'] : [])]}
        rows={deliveries.items.map((d) => [
          d.eventType,
          <span class={`badge status-${d.status === 'delivered' ? 'sent' : d.status}`}>{d.status}</span>,
          String(d.attempts),
          <Answer delivery={d} />,
          <When iso={d.createdAt} />,
          <details>
            <summary>Body</summary>
            <pre class="text-body">{JSON.stringify(JSON.parse(d.payload), null, 2)}</pre>
          </details>,
          ...(writable
            ? [
                <form class="inline" method="post" action={`${base}/deliveries/${d.id}/retry`}>
                  <Csrf token={csrf} />
                  <button type="submit" class="secondary">
                    Retry
                  </button>
                </form>,
              ]
            : []),
        ])}
        empty="Nothing delivered yet."
      />
      <nav class="pager" aria-label="Pages">
        {deliveries.nextCursor ? <a href={`${base}?after=${deliveries.nextCursor}`}>Older</a> : null}
      </nav>
    </>,
  );
}

export const webhookEndpointPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/webhooks/:id', access: 'read', handler: (c) => endpointPage(c) },
  {
    method: 'post',
    path: '/dashboard/webhooks/:id',
    access: 'write',
    handler: (c) => {
      const id = c.req.param('id') ?? '';
      return act(
        c,
        async () => {
          const fields = { ...endpointFields(c.var.form), enabled: c.var.form.get('enabled') === 'true' };
          const body = updateWebhookBody.safeParse({ ...fields, description: fields.description ?? null });
          if (!body.success) throw invalidInput(body.error);
          await changeEndpoint(c.env, c.var.signedIn.accountId, id, body.data);
        },
        `/dashboard/webhooks/${id}?done=saved`,
        (notice) => endpointPage(c, notice),
        { action: 'webhook.changed', target: id },
      );
    },
  },
  {
    method: 'post',
    path: '/dashboard/webhooks/:id/rotate',
    access: 'write',
    handler: (c) =>
      withSecret(
        c,
        async () => {
          const id = c.req.param('id') ?? '';
          const { secret } = await changeEndpoint(c.env, c.var.signedIn.accountId, id, { rotateSecret: true });
          await audit(c, 'webhook.secret_rotated', id);
          return secret!;
        },
        (notice) => endpointPage(c, notice),
      ),
  },
  formOnId(
    '/dashboard/webhooks/:id/test',
    (c, id) => sendTestEvent(c.env, c.var.signedIn.accountId, id),
    (id) => `/dashboard/webhooks/${id}?done=tested`,
    endpointPage,
  ),
  formOnId(
    '/dashboard/webhooks/:id/delete',
    (c, id) => removeEndpoint(c.env, c.var.signedIn.accountId, id),
    () => '/dashboard/webhooks?done=deleted',
    endpointPage,
    'webhook.deleted',
  ),
  {
    method: 'post',
    path: '/dashboard/webhooks/:id/deliveries/:deliveryId/retry',
    access: 'write',
    handler: (c) => {
      const id = c.req.param('id') ?? '';
      return act(
        c,
        () => retryDelivery(c.env, c.var.signedIn.accountId, id, c.req.param('deliveryId') ?? ''),
        `/dashboard/webhooks/${id}?done=retried`,
        (notice) => endpointPage(c, notice),
      );
    },
  },
];
