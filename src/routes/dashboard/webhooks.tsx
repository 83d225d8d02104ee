// Webhooks: the account's endpoints and the events each receives, and a new one (its signing secret shown once);
// one endpoint's page is in webhook.tsx.
import type { Context } from 'hono';
import { can } from '../../dashboard/roles';
import { Csrf, Notice, Secret, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import { createWebhookBody } from '../../schemas/webhooks';
import { accountStore } from '../../store/account/client';
import type { WebhookEndpoint } from '../../store/account/webhooks';
import { recordAudit } from '../../store/control/audit-log';
import { invalidInput } from '../../validation';
import { addEndpoint } from '../../webhooks/endpoints';
import { EVENT_TYPES } from '../../webhooks/events';
import { type PageDeclaration, type PageEnv, render, shownOnPage } from './page';

export const DONE: Record<string, string> = {
  saved: 'Endpoint saved.',
  deleted: 'Endpoint deleted.',
  tested: 'Test event queued: it shows in the log below once delivered.',
  retried: 'Delivery queued again.',
};

/** The endpoint's fields as a form posts them: each event a checkbox, `enabled` a checkbox. */
export const endpointFields = (form: URLSearchParams) => ({
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

export function EndpointForm(props: { endpoint?: WebhookEndpoint; action: string; csrf: string; label: string }) {
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
  const endpoints = await accountStore(c.env, c.var.signedIn.accountId).listEndpoints(c.var.signedIn.accountId);
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

export const audit = (c: Context<PageEnv>, action: string, target: string) =>
  recordAudit(c.env.DB, c.var.signedIn.accountId, { actor: c.var.signedIn.email, action, target });

/** A form whose answer shows a new signing secret once: the page itself, never a redirect. */
export async function withSecret(
  c: Context<PageEnv>,
  make: () => Promise<string>,
  again: (n: unknown) => Promise<Response>,
) {
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
];
