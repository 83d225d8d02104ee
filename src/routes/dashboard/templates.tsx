// Templates: the account's saved templates; create, edit with a preview that follows what is typed (sample vars,
// HTML in a sandboxed frame that runs no script), send a test to yourself, delete.
import type { Context } from 'hono';
import { z } from 'zod';
import { can } from '../../dashboard/roles';
import { Csrf, Id, Notice, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import { acceptEmails } from '../../mail/accept';
import { missingVars } from '../../mail/template';
import { changeTemplate, newTemplate, removeTemplate, requireTemplate } from '../../mail/templates';
import { pageQuery, pageRequest } from '../../schemas/common';
import { createTemplateBody, templateSendBody, updateTemplateBody } from '../../schemas/templates';
import { accountStore } from '../../store/account/client';
import { invalidInput } from '../../validation';
import { act, formFields, formOnId, type PageDeclaration, type PageEnv, render } from './page';
import { preview, previewScript, TemplateForm, varsOf } from './template-form';

const DONE: Record<string, string> = {
  created: 'Template created.',
  saved: 'Template saved.',
  deleted: 'Template deleted.',
  tested: 'Test email queued to your address.',
};

/** The template's fields as a form posts them (an empty body is none, as the API's JSON leaves it out). */
const fieldsForm = z
  .object({ name: z.string(), subject: z.string(), htmlBody: z.string().optional(), textBody: z.string().optional() })
  .transform((f) => ({
    name: f.name,
    subject: f.subject,
    ...(f.htmlBody ? { htmlBody: f.htmlBody } : {}),
    ...(f.textBody ? { textBody: f.textBody } : {}),
  }));
async function listPage(c: Context<PageEnv>) {
  const parsed = pageQuery.safeParse({ ...c.req.query(), limit: '50' });
  if (!parsed.success) throw invalidInput(parsed.error);
  const request = pageRequest(parsed.data);
  const page = await accountStore(c.env, c.var.signedIn.accountId).listTemplates(c.var.signedIn.accountId, request);
  const done = DONE[c.req.query('done') ?? ''];
  return render(
    c,
    'Templates',
    <>
      <h1>Templates</h1>
      {done ? <Notice tone="ok">{done}</Notice> : null}
      {can(c.var.signedIn.role, 'write') ? (
        <p>
          <a href="/dashboard/templates/new">New template</a>
        </p>
      ) : null}
      <Table
        columns={['Name', 'Subject', 'Updated', 'Id']}
        rows={page.items.map((t) => [
          <a href={`/dashboard/templates/${t.id}`}>{t.name}</a>,
          t.subject,
          <When iso={t.updatedAt} />,
          <Id value={t.id} />,
        ])}
        empty="No templates yet."
      />
      <nav class="pager" aria-label="Pages">
        {page.nextCursor ? <a href={`/dashboard/templates?after=${page.nextCursor}`}>Next</a> : null}
      </nav>
    </>,
  );
}

function newPage(c: Context<PageEnv>, notice?: unknown) {
  return render(
    c,
    'New template',
    <>
      <p>
        <a href="/dashboard/templates">← Templates</a>
      </p>
      <h1>New template</h1>
      {notice}
      <TemplateForm template={{}} action="/dashboard/templates" csrf={c.var.frame.csrf} writable vars="name=Ada" />
      {previewScript}
    </>,
  );
}

async function editPage(c: Context<PageEnv>, notice?: unknown) {
  const template = await requireTemplate(
    accountStore(c.env, c.var.signedIn.accountId),
    c.var.signedIn.accountId,
    c.req.param('id') ?? '',
  );
  const writable = can(c.var.signedIn.role, 'write');
  const done = DONE[c.req.query('done') ?? ''];
  const base = `/dashboard/templates/${template.id}`;
  const { csrf } = c.var.frame;
  const placeholders = missingVars([template.subject, template.htmlBody, template.textBody], {});
  return render(
    c,
    template.name,
    <>
      <p>
        <a href="/dashboard/templates">← Templates</a>
      </p>
      <h1>{template.name}</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <p class="muted">
        <Id value={template.id} /> · updated <When iso={template.updatedAt} />
      </p>
      <TemplateForm
        template={template}
        action={base}
        csrf={csrf}
        writable={writable}
        vars={placeholders.map((name) => `${name}=`).join('\n')}
      />
      {writable ? (
        <section class="panel" aria-labelledby="test-send">
          <h2 id="test-send">Send a test</h2>
          <form class="inline" method="post" action={`${base}/test`}>
            <Csrf token={csrf} />
            <label>
              Sample vars (one name=value per line)
              <textarea name="vars" rows={2}>
                {placeholders.map((name) => `${name}=`).join('\n')}
              </textarea>
            </label>
            <button type="submit" class="secondary">
              Send to {c.var.signedIn.email}
            </button>
          </form>
        </section>
      ) : null}
      {writable ? (
        <form class="inline" method="post" action={`${base}/delete`}>
          <Csrf token={csrf} />
          <button type="submit" class="danger">
            Delete the template
          </button>
        </form>
      ) : null}
      {previewScript}
    </>,
  );
}

export const templatePages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/templates', access: 'read', handler: listPage },
  { method: 'get', path: '/dashboard/templates/new', access: 'write', handler: (c) => newPage(c) },
  { method: 'post', path: '/dashboard/templates/preview', access: 'read', handler: preview },
  {
    method: 'post',
    path: '/dashboard/templates',
    access: 'write',
    handler: async (c) => {
      let id = '';
      return act(
        c,
        async () => {
          const body = createTemplateBody.safeParse(formFields(c, fieldsForm));
          if (!body.success) throw invalidInput(body.error);
          id = (await newTemplate(accountStore(c.env, c.var.signedIn.accountId), c.var.signedIn.accountId, body.data))
            .id;
        },
        '/dashboard/templates?done=created',
        (notice) => newPage(c, notice),
        () => ({ action: 'template.created', target: id }),
      );
    },
  },
  { method: 'get', path: '/dashboard/templates/:id', access: 'read', handler: (c) => editPage(c) },
  {
    method: 'post',
    path: '/dashboard/templates/:id',
    access: 'write',
    handler: (c) => {
      const id = c.req.param('id') ?? '';
      return act(
        c,
        async () => {
          const change = updateTemplateBody.safeParse(formFields(c, fieldsForm));
          if (!change.success) throw invalidInput(change.error);
          await changeTemplate(
            accountStore(c.env, c.var.signedIn.accountId),
            c.var.signedIn.accountId,
            id,
            change.data,
          );
        },
        `/dashboard/templates/${id}?done=saved`,
        (notice) => editPage(c, notice),
        { action: 'template.changed', target: id },
      );
    },
  },
  {
    method: 'post',
    path: '/dashboard/templates/:id/test',
    access: 'write',
    handler: (c) => {
      const id = c.req.param('id') ?? '';
      return act(
        c,
        async () => {
          const vars = varsOf(formFields(c, z.object({ vars: z.string().optional() })).vars);
          const request = templateSendBody.safeParse({ to: [c.var.signedIn.email], templateId: id, vars });
          if (!request.success) throw invalidInput(request.error);
          const sender = { accountId: c.var.signedIn.accountId, test: false };
          await acceptEmails(c.env, sender, [request.data], { countTowardsAllowance: false, jsonBody: '' });
        },
        `/dashboard/templates/${id}?done=tested`,
        (notice) => editPage(c, notice),
        { action: 'template.tested', target: id },
      );
    },
  },
  formOnId(
    '/dashboard/templates/:id/delete',
    (c, id) => removeTemplate(accountStore(c.env, c.var.signedIn.accountId), c.var.signedIn.accountId, id),
    () => '/dashboard/templates?done=deleted',
    (c, notice) => editPage(c, notice),
    'template.deleted',
  ),
];
