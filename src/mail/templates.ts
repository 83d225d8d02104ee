// An account's saved templates: the rules the API's routes and the dashboard's forms share.

import { ApiError } from '../errors';
import {
  createTemplate,
  deleteTemplate,
  findTemplate,
  type Template,
  type TemplateFields,
  updateTemplate,
} from '../store/account/templates';
import { type D1Reader, readOwnWrite } from '../store/control/reads';

export const templateNotFound = () =>
  new ApiError('TEMPLATE_NOT_FOUND', 'templateId: no such template for this account');

/** A new template (its body validated by the caller's schema: htmlBody or textBody is not empty). */
export const newTemplate = (
  db: D1Database,
  accountId: string,
  body: { name: string; subject: string; htmlBody?: string; textBody?: string },
) =>
  createTemplate(db, accountId, {
    name: body.name,
    subject: body.subject,
    htmlBody: body.htmlBody ?? '',
    textBody: body.textBody ?? '',
  });

/** A template of the account, also one written a moment ago; 404 otherwise. */
export async function requireTemplate(db: D1Database, accountId: string, templateId: string): Promise<Template> {
  const template = await readOwnWrite(db, (reader: D1Reader) => findTemplate(reader, accountId, templateId));
  if (!template) throw templateNotFound();
  return template;
}

/** Changes the given fields; the template must keep a non-empty htmlBody or textBody (400). */
export async function changeTemplate(
  db: D1Database,
  accountId: string,
  templateId: string,
  change: Partial<TemplateFields>,
): Promise<Template> {
  const current = await findTemplate(db, accountId, templateId);
  if (!current) throw templateNotFound();
  if (!(change.htmlBody ?? current.htmlBody) && !(change.textBody ?? current.textBody)) {
    throw new ApiError('INVALID_INPUT', 'htmlBody: a template needs htmlBody or textBody');
  }
  const template = await updateTemplate(db, accountId, templateId, change);
  if (!template) throw templateNotFound();
  return template;
}

export async function removeTemplate(db: D1Database, accountId: string, templateId: string): Promise<void> {
  if (!(await deleteTemplate(db, accountId, templateId))) throw templateNotFound();
}
