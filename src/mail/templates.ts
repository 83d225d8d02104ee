// An account's saved templates: the rules the API's routes and the dashboard's forms share.

import { ApiError } from '../errors';
import type { AccountStore } from '../store/account/client';
import type { Template, TemplateFields } from '../store/account/templates';

export const templateNotFound = () =>
  new ApiError('TEMPLATE_NOT_FOUND', 'templateId: no such template for this account');

/** A new template (its body validated by the caller's schema: htmlBody or textBody is not empty). */
export const newTemplate = (
  store: AccountStore,
  accountId: string,
  body: { name: string; subject: string; htmlBody?: string; textBody?: string },
) =>
  store.createTemplate(accountId, {
    name: body.name,
    subject: body.subject,
    htmlBody: body.htmlBody ?? '',
    textBody: body.textBody ?? '',
  });

/** A template of the account; 404 otherwise. */
export async function requireTemplate(store: AccountStore, accountId: string, templateId: string): Promise<Template> {
  const template = await store.findTemplate(accountId, templateId);
  if (!template) throw templateNotFound();
  return template;
}

/** Changes the given fields; the template must keep a non-empty htmlBody or textBody (400). */
export async function changeTemplate(
  store: AccountStore,
  accountId: string,
  templateId: string,
  change: Partial<TemplateFields>,
): Promise<Template> {
  const current = await store.findTemplate(accountId, templateId);
  if (!current) throw templateNotFound();
  if (!(change.htmlBody ?? current.htmlBody) && !(change.textBody ?? current.textBody)) {
    throw new ApiError('INVALID_INPUT', 'htmlBody: a template needs htmlBody or textBody');
  }
  const template = await store.updateTemplate(accountId, templateId, change);
  if (!template) throw templateNotFound();
  return template;
}

export async function removeTemplate(store: AccountStore, accountId: string, templateId: string): Promise<void> {
  if (!(await store.deleteTemplate(accountId, templateId))) throw templateNotFound();
}
