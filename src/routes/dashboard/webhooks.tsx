// Webhooks: the account's endpoints and the events each receives; create (the signing secret shown once), edit,
// rotate the secret, send a test event, delete; an endpoint's delivery log with each request and the answer,
// and a retry.
import type { Context } from 'hono';
import { can } from '../../dashboard/roles';
import { ActionButtons, Csrf, Id, Notice, Secret, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import { recordAudit } from '../../db/audit-log';
import { listDeliveries } from '../../db/webhook-deliveries';
import { listEndpoints, type WebhookEndpoint } from '../../db/webhooks';
import { pageQuery, pageRequest } from '../../schemas/common';
import { createWebhookBody, updateWebhookBody } from '../../schemas/webhooks';
import { invalidInput } from '../../validation';
import {
  addEndpoint,
  changeEndpoint,
  ownEndpoint,
  removeEndpoint,
  retryDelivery,
  sendTestEvent,
} from '../../webhooks/endpoints';
import { EVENT_TYPES } from '../../webhooks/events';
import { act, formOnId, type PageDeclaration, type PageEnv, render, shownOnPage } from './page';

const DONE: Record<string, string> = {
  saved: 'Endpoint saved.',
  deleted: 'Endpoint deleted.',
  tested: 'Test event queued: it shows in the log below once delivered.',
  retried: 'Delivery queued again.',
};

/** The endpoint's fields as a form posts them: each event a checkbox, `enabled` a checkbox. */
const endpointFields = (form: URLSearchParams) => ({
  url: form.get('url') ?? '',
  events: form.getAll('events'),
  ...(form.get('description') ? { description: form.get('description')! } : {}),
});

const NewSecret = (props: { value: string }) => (
  <Notice tone="ok">
    <p>Copy the signing secret now: it is shown only this once.</p>
    <Secret label="Signing secret" value={props.value} />
  </Notice>
);

function EndpointForm(props: { endpoint?: WebhookEndpoint; action: string; csrf: string; label: string }) {
  const { endpoint } = props;
  return (
    <form class="stack panel" method="post" action={props.action}>
      <Csrf token={props.csrf} />
      <label>
        URL
        <input type="url" name="url" value={endpoint?.url ?? ''} required />
      </label>
      <label>
        Description
        <input name="description" value={endpoint?.description ?? ''} maxlength={200} />
      </label>
      <fieldset class="inline">
        <legend>Events</legend>
        {EVENT_TYPES.map((type) => (
          <label class="check">
            <input type="checkbox" name="events" value={type} checked={endpoint?.events.includes(type) ?? false} />{' '}
            {type}
          </label>
        ))}
      </fieldset>
      {endpoint ? (
        <label class="check">
          <input type="checkbox" name="enabled" value="true" checked={endpoint.enabled} /> Enabled
        </label>
      ) : null}
      <div>
        <button type="submit">{props.label}</button>
      </div>
    </form>
  );
}

async function listPage(c: Context<PageEnv>, notice?: unknown) {
  const endpoints = await listEndpoints(c.env.DB, c.var.signedIn.accountId);
  const done = DONE[c.req.query('done') ?? ''];
  return render(
    c,
    'Webhooks',
    <>
      <h1>Webhooks</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <Table
        columns={['Endpoint', 'Events', 'State', 'Created']}
        rows={endpoints.map((w) => [
          <a href={`/dashboard/webhooks/${w.id}`}>{w.description ?? w.url}</a>,
          w.events.join(', '),
          w.enabled ? 'enabled' : `disabled${w.disabledReason ? ` (${w.disabledReason})` : ''}`,
          <When iso={w.createdAt} />,
        ])}
        empty="No endpoints yet."
      />
      {can(c.var.signedIn.role, 'write') ? (
        <>
          <h2>Add an endpoint</h2>
          <EndpointForm action="/dashboard/webhooks" csrf={c.var.frame.csrf} label="Add endpoint" />
        </>
      ) : null}
    </>,
  );
}

async function endpointPage(c: Context<PageEnv>, notice?: unknown) {
  const { accountId, role } = c.var.signedIn;
  const endpoint = await ownEndpoint(c.env, accountId, c.req.param('id') ?? '');
  const parsed = pageQuery.safeParse({ ...c.req.query(), limit: '25' });
  if (!parsed.success) throw invalidInput(parsed.error);
  const request = pageRequest(parsed.data);
  const deliveries = await listDeliveries(c.env.DB, endpoint.id, request);
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
      <p class="muted">{deliveries.total} deliveries, newest first. The answer's body is not kept: its status is.</p>
      <Table
        columns={['Event', 'Status', 'Attempts', 'Answer', 'Created', 'Request', ...(writable ? ['Actions'] : [])]}
        rows={deliveries.items.map((d) => [
          d.eventType,
          <span class={`badge status-${d.status === 'delivered' ? 'sent' : d.status}`}>{d.status}</span>,
          String(d.attempts),
          [d.lastStatus === null ? '' : `HTTP ${d.lastStatus}`, d.lastError ?? ''].filter(Boolean).join(' · ') || '—',
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

const audit = (c: Context<PageEnv>, action: string, target: string) =>
  recordAudit(c.env.DB, c.var.signedIn.accountId, { actor: c.var.signedIn.email, action, target });

/** A form whose answer shows a new signing secret once: the page itself, never a redirect. */
async function withSecret(c: Context<PageEnv>, make: () => Promise<string>, again: (n: unknown) => Promise<Response>) {
  try {
    const secret = await make();
    return again(<NewSecret value={secret} />);
  } catch (error) {
    return shownOnPage(c, error, again);
  }
}

export const webhookPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/webhooks', access: 'read', handler: (c) => listPage(c) },
  {
    method: 'post',
    path: '/dashboard/webhooks',
    access: 'write',
    handler: (c) =>
      withSecret(
        c,
        async () => {
          const body = createWebhookBody.safeParse(endpointFields(c.var.form));
          if (!body.success) throw invalidInput(body.error);
          const endpoint = await addEndpoint(c.env, c.var.signedIn.accountId, body.data);
          await audit(c, 'webhook.created', endpoint.id);
          c.status(201);
          return endpoint.secret;
        },
        (notice) => listPage(c, notice),
      ),
  },
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
