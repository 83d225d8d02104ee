import { mailApi } from '../auth/guards';
import { requireRoutes } from '../config';
import { acceptEmails, queuedView } from '../mail/accept';
import { healthCheckMessage } from '../mail/health-check';
import { changeTemplate, newTemplate, removeTemplate, requireTemplate } from '../mail/templates';
import { linksFilling, linkTo } from '../openapi/document';
import { pageQuery, pageRequest } from '../schemas/common';
import { queuedResponse } from '../schemas/emails';
import * as schema from '../schemas/templates';
import { accountStore } from '../store/account/client';
import type { NewEmail } from '../store/account/emails';
import type { Template } from '../store/account/templates';
import { findAccount } from '../store/control/accounts';
import { emailLinks, QUEUE_ERRORS, QUEUED_EXAMPLE, SENDING, senderOf } from './emails';
import { json, ok, route, router } from './route';

// Template management (create/update/delete) counts against the per-credential read bucket.

const templateDetail = (t: Template) => ({
  id: t.id,
  name: t.name,
  subject: t.subject,
  htmlBody: t.htmlBody,
  textBody: t.textBody,
});

const TEMPLATE = {
  id: 'tpl_7d2kq4mxz3ncw5ty8hbe',
  name: 'welcome',
  subject: 'Welcome, {{name}}',
  htmlBody: '<p>Hello {{name}}</p>',
  textBody: 'Hello {{name}}',
};
const UPDATED_AT = '2026-11-21T22:40:00.000Z';

const sendWithTemplate = route({
  method: 'post',
  path: '/api/v1/templates/send',
  ...SENDING,
  tag: 'Templates',
  summary: 'Send using a template',
  body: schema.templateSendBody,
  bodyExample: { to: 'ada@example.com', templateId: TEMPLATE.id, vars: { name: 'Ada' } },
  success: {
    status: 200,
    content: json(schema.templateQueuedResponse, {
      success: true,
      data: { ...QUEUED_EXAMPLE.data, templateId: TEMPLATE.id },
    }),
    links: emailLinks(),
  },
  errors: [...QUEUE_ERRORS, 'TEMPLATE_NOT_FOUND'],
});

const sendTest = route({
  method: 'post',
  path: '/api/v1/templates/send-test',
  tag: 'Templates',
  summary: 'Send the account-health test email',
  guard: mailApi,
  limit: { bucket: 'mail' },
  idempotent: true,
  body: schema.sendTestBody,
  bodyExample: { to: 'ops@example.com' },
  success: { status: 200, content: json(queuedResponse, QUEUED_EXAMPLE), links: emailLinks() },
  errors: [...QUEUE_ERRORS],
});

const list = route({
  method: 'get',
  path: '/api/v1/templates',
  tag: 'Templates',
  summary: 'List templates',
  guard: mailApi,
  limit: { bucket: 'read' },
  query: pageQuery,
  success: {
    status: 200,
    content: json(schema.templateListResponse, {
      success: true,
      data: {
        page: 1,
        limit: 20,
        total: 1,
        items: [{ id: TEMPLATE.id, name: TEMPLATE.name, subject: TEMPLATE.subject, updatedAt: UPDATED_AT }],
        nextCursor: null,
      },
    }),
  },
});

const create = route({
  method: 'post',
  path: '/api/v1/templates',
  tag: 'Templates',
  summary: 'Create a template',
  guard: mailApi,
  limit: { bucket: 'read' },
  body: schema.createTemplateBody,
  bodyExample: {
    name: TEMPLATE.name,
    subject: TEMPLATE.subject,
    htmlBody: TEMPLATE.htmlBody,
    textBody: TEMPLATE.textBody,
  },
  success: {
    status: 201,
    content: json(schema.templateCreatedResponse, { success: true, data: { ...TEMPLATE, updatedAt: UPDATED_AT } }),
    // Follow a created template to the routes that take its id.
    links: {
      ...linksFilling('templateId', '$response.body#/data/id', {
        getTemplate: ['get', '/api/v1/templates/{templateId}'],
        updateTemplate: ['put', '/api/v1/templates/{templateId}'],
        deleteTemplate: ['delete', '/api/v1/templates/{templateId}'],
      }),
      sendWithTemplate: linkTo('post', '/api/v1/templates/send', {
        requestBody: { templateId: '$response.body#/data/id' },
      }),
    },
  },
});

const get = route({
  method: 'get',
  path: '/api/v1/templates/{templateId}',
  tag: 'Templates',
  summary: 'Get a template',
  guard: mailApi,
  limit: { bucket: 'read' },
  params: schema.templateIdParam,
  success: { status: 200, content: json(schema.templateResponse, { success: true, data: TEMPLATE }) },
  errors: ['TEMPLATE_NOT_FOUND'],
});

const update = route({
  method: 'put',
  path: '/api/v1/templates/{templateId}',
  tag: 'Templates',
  summary: 'Update a template',
  guard: mailApi,
  limit: { bucket: 'read' },
  params: schema.templateIdParam,
  body: schema.updateTemplateBody,
  bodyExample: { subject: 'Welcome aboard, {{name}}' },
  success: {
    status: 200,
    content: json(schema.templateCreatedResponse, {
      success: true,
      data: { ...TEMPLATE, subject: 'Welcome aboard, {{name}}', updatedAt: UPDATED_AT },
    }),
  },
  errors: ['TEMPLATE_NOT_FOUND'],
});

const remove = route({
  method: 'delete',
  path: '/api/v1/templates/{templateId}',
  tag: 'Templates',
  summary: 'Delete a template',
  guard: mailApi,
  limit: { bucket: 'read' },
  params: schema.templateIdParam,
  success: {
    status: 200,
    content: json(schema.templateDeletedResponse, { success: true, data: { id: TEMPLATE.id, deleted: true } }),
  },
  errors: ['TEMPLATE_NOT_FOUND'],
});

export const templateRoutes = router()
  .openapi(sendWithTemplate, async (c) => {
    requireRoutes(c.env);
    const respond = ([email]: NewEmail[]) => ({ ...queuedView(email!), templateId: email!.templateId! });
    const emails = await acceptEmails(c.env, senderOf(c), [c.req.valid('json')], {
      countTowardsAllowance: false,
      jsonBody: c.var.jsonBody,
      idempotencyKey: c.var.idempotencyKey,
      respond,
    });
    return ok(c, respond(emails));
  })
  .openapi(sendTest, async (c) => {
    requireRoutes(c.env);
    const body = c.req.valid('json');
    const accountId = c.var.credential.accountId;
    const account = await findAccount(c.env.DB, accountId);
    const respond = ([email]: NewEmail[]) => ({ id: email!.id, status: 'QUEUED' as const });
    const emails = await acceptEmails(
      c.env,
      senderOf(c),
      [{ ...body, ...healthCheckMessage(account?.name ?? accountId, new Date()) }],
      { countTowardsAllowance: false, jsonBody: c.var.jsonBody, idempotencyKey: c.var.idempotencyKey, respond },
    );
    return ok(c, respond(emails));
  })
  .openapi(list, async (c) => {
    const request = pageRequest(c.req.valid('query'));
    const { items, total, nextCursor } = await accountStore(c.env, c.var.credential.accountId).listTemplates(
      c.var.credential.accountId,
      request,
    );
    const summaries = items.map((t) => ({ id: t.id, name: t.name, subject: t.subject, updatedAt: t.updatedAt }));
    const { page, limit } = request;
    return ok(c, { page, limit, total, items: summaries, nextCursor });
  })
  .openapi(create, async (c) => {
    const template = await newTemplate(
      accountStore(c.env, c.var.credential.accountId),
      c.var.credential.accountId,
      c.req.valid('json'),
    );
    return ok(c, { ...templateDetail(template), updatedAt: template.updatedAt }, 201);
  })
  .openapi(get, async (c) => {
    const { templateId } = c.req.valid('param');
    return ok(
      c,
      templateDetail(
        await requireTemplate(accountStore(c.env, c.var.credential.accountId), c.var.credential.accountId, templateId),
      ),
    );
  })
  .openapi(update, async (c) => {
    const { templateId } = c.req.valid('param');
    const template = await changeTemplate(
      accountStore(c.env, c.var.credential.accountId),
      c.var.credential.accountId,
      templateId,
      c.req.valid('json'),
    );
    return ok(c, { ...templateDetail(template), updatedAt: template.updatedAt });
  })
  .openapi(remove, async (c) => {
    const { templateId } = c.req.valid('param');
    await removeTemplate(accountStore(c.env, c.var.credential.accountId), c.var.credential.accountId, templateId);
    return ok(c, { id: templateId, deleted: true as const });
  });
