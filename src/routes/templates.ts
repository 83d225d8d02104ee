import { Hono } from 'hono';
import { requireScope } from '../auth/guards';
import { requireSmtp } from '../config';
import { rateLimit } from '../limits/rate-limit';
import { idempotent } from '../middleware/idempotency';
import { findAccount } from '../db/accounts';
import { createTemplate, deleteTemplate, findTemplate, listTemplates, updateTemplate, type Template } from '../db/templates';
import type { AppEnv } from '../env';
import { ApiError } from '../errors';
import { composeEmail } from '../mail/compose';
import { healthCheckMessage } from '../mail/health-check';
import { submitEmail } from '../mail/submit';
import { pageQuery } from '../schemas/emails';
import { createTemplateBody, sendTestBody, templateIdParam, templateSendBody, updateTemplateBody } from '../schemas/templates';
import { validate } from '../validation';

const mailApi = requireScope('mail_api');
// Template management (create/update/delete) counts against the per-credential read bucket.

const templateNotFound = () => new ApiError('TEMPLATE_NOT_FOUND', 'templateId: no such template for this account');

const templateDetail = (t: Template) => ({
  id: t.id,
  name: t.name,
  subject: t.subject,
  htmlBody: t.htmlBody,
  textBody: t.textBody,
});

export const templateRoutes = new Hono<AppEnv>()
  // 3. Send using a template
  .post('/send', mailApi, rateLimit('mail'), validate('json', templateSendBody), idempotent(), async (c) => {
    requireSmtp(c.env);
    const email = await composeEmail(c.env, c.var.credential.accountId, c.req.valid('json'));
    await submitEmail(c.env, email, { countTowardsAllowance: false });
    return c.json({ success: true, data: { id: email.id, status: 'QUEUED', templateId: email.templateId! } });
  })
  // 4. Send the fixed account-health test email
  .post('/send-test', mailApi, rateLimit('mail'), validate('json', sendTestBody), idempotent(), async (c) => {
    requireSmtp(c.env);
    const body = c.req.valid('json');
    const accountId = c.var.credential.accountId;
    const account = await findAccount(c.env.DB, accountId);
    const email = await composeEmail(c.env, accountId, {
      ...body,
      ...healthCheckMessage(account?.name ?? accountId, new Date()),
    });
    await submitEmail(c.env, email, { countTowardsAllowance: false });
    return c.json({ success: true, data: { id: email.id, status: 'QUEUED' } });
  })
  // 5. List templates
  .get('/', mailApi, rateLimit('read'), validate('query', pageQuery), async (c) => {
    const { page, limit } = c.req.valid('query');
    const { items, total } = await listTemplates(c.env.DB, c.var.credential.accountId, page, limit);
    return c.json({
      success: true,
      data: {
        page,
        limit,
        total,
        items: items.map((t) => ({ id: t.id, name: t.name, subject: t.subject, updatedAt: t.updatedAt })),
      },
    });
  })
  // Create a template (decisions.md)
  .post('/', mailApi, rateLimit('read'), validate('json', createTemplateBody), async (c) => {
    const body = c.req.valid('json');
    const template = await createTemplate(c.env.DB, c.var.credential.accountId, {
      name: body.name,
      subject: body.subject,
      htmlBody: body.htmlBody ?? '',
      textBody: body.textBody ?? '',
    });
    return c.json({ success: true, data: { ...templateDetail(template), updatedAt: template.updatedAt } }, 201);
  })
  // 6. Get a template
  .get('/:templateId', mailApi, rateLimit('read'), validate('param', templateIdParam), async (c) => {
    const template = await findTemplate(c.env.DB, c.var.credential.accountId, c.req.valid('param').templateId);
    if (!template) throw templateNotFound();
    return c.json({ success: true, data: templateDetail(template) });
  })
  // Update a template
  .put('/:templateId', mailApi, rateLimit('read'), validate('param', templateIdParam), validate('json', updateTemplateBody), async (c) => {
    const accountId = c.var.credential.accountId;
    const { templateId } = c.req.valid('param');
    const change = c.req.valid('json');
    const current = await findTemplate(c.env.DB, accountId, templateId);
    if (!current) throw templateNotFound();
    if (!(change.htmlBody ?? current.htmlBody) && !(change.textBody ?? current.textBody)) {
      throw new ApiError('INVALID_INPUT', 'htmlBody: a template needs htmlBody or textBody');
    }
    const template = await updateTemplate(c.env.DB, accountId, templateId, change);
    if (!template) throw templateNotFound();
    return c.json({ success: true, data: { ...templateDetail(template), updatedAt: template.updatedAt } });
  })
  // Delete a template
  .delete('/:templateId', mailApi, rateLimit('read'), validate('param', templateIdParam), async (c) => {
    const deleted = await deleteTemplate(c.env.DB, c.var.credential.accountId, c.req.valid('param').templateId);
    if (!deleted) throw templateNotFound();
    return c.json({ success: true, data: { id: c.req.valid('param').templateId, deleted: true } });
  });
