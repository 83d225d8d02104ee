import { newId, nowIso } from '../../ids';
import { type PageRequest, readPage } from '../paging';
import type { AccountSql } from './object-sql';

export type Template = {
  id: string;
  accountId: string;
  name: string;
  subject: string;
  htmlBody: string;
  textBody: string;
  createdAt: string;
  updatedAt: string;
};

export type TemplateFields = { name: string; subject: string; htmlBody: string; textBody: string };

type TemplateRow = {
  id: string;
  account_id: string;
  name: string;
  subject: string;
  html_body: string;
  text_body: string;
  created_at: string;
  updated_at: string;
};

const COLUMNS = 'id, account_id, name, subject, html_body, text_body, created_at, updated_at';

const toTemplate = (row: TemplateRow): Template => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  subject: row.subject,
  htmlBody: row.html_body,
  textBody: row.text_body,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function createTemplate(db: AccountSql, accountId: string, fields: TemplateFields): Promise<Template> {
  const now = nowIso();
  const template: Template = { id: newId('tpl'), accountId, ...fields, createdAt: now, updatedAt: now };
  await db
    .prepare(`INSERT INTO templates (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
    .bind(template.id, accountId, fields.name, fields.subject, fields.htmlBody, fields.textBody, now, now)
    .run();
  return template;
}

export async function findTemplate(db: AccountSql, accountId: string, id: string): Promise<Template | null> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM templates WHERE id = ? AND account_id = ?`)
    .bind(id, accountId)
    .first<TemplateRow>();
  return row ? toTemplate(row) : null;
}

/** Most recently changed first (templates are few per account: counted as they are). */
export const listTemplates = (db: AccountSql, accountId: string, request: PageRequest) =>
  readPage(
    db,
    {
      select: `SELECT ${COLUMNS} FROM templates WHERE account_id = ?`,
      binds: [accountId],
      order: { time: 'updated_at', clock: 'iso', key: 'id' },
      count: db.prepare('SELECT COUNT(*) AS total FROM templates WHERE account_id = ?').bind(accountId),
    },
    request,
    toTemplate,
  );

export async function updateTemplate(
  db: AccountSql,
  accountId: string,
  id: string,
  fields: Partial<TemplateFields>,
): Promise<Template | null> {
  const row = await db
    .prepare(
      `UPDATE templates SET
         name = COALESCE(?, name), subject = COALESCE(?, subject),
         html_body = COALESCE(?, html_body), text_body = COALESCE(?, text_body), updated_at = ?
       WHERE id = ? AND account_id = ? RETURNING ${COLUMNS}`,
    )
    .bind(
      fields.name ?? null,
      fields.subject ?? null,
      fields.htmlBody ?? null,
      fields.textBody ?? null,
      nowIso(),
      id,
      accountId,
    )
    .first<TemplateRow>();
  return row ? toTemplate(row) : null;
}

export async function deleteTemplate(db: AccountSql, accountId: string, id: string): Promise<boolean> {
  const result = await db.prepare('DELETE FROM templates WHERE id = ? AND account_id = ?').bind(id, accountId).run();
  return result.meta.changes > 0;
}
