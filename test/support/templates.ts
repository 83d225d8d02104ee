// Template helpers shared by the template CRUD and template send tests.
import { expect } from 'vitest';
import { call } from './api';
import type { SavedTemplate, TemplateDetail } from './responses';

export type TemplateInput = { name?: string; subject?: string; htmlBody?: string; textBody?: string };

/** Creates a template through the API and returns its `data`. */
export async function createTemplate(key: string, input: TemplateInput = {}) {
  const body = {
    name: input.name ?? `Template ${crypto.randomUUID().slice(0, 8)}`,
    subject: input.subject ?? 'Hello {{name}}',
    ...(input.htmlBody === undefined && input.textBody === undefined
      ? { htmlBody: '<p>Hi {{name}}</p>', textBody: 'Hi {{name}}' }
      : {}),
    ...(input.htmlBody !== undefined ? { htmlBody: input.htmlBody } : {}),
    ...(input.textBody !== undefined ? { textBody: input.textBody } : {}),
  };
  const res = await call<SavedTemplate>('POST', '/api/v1/templates', { token: key, body });
  expect(res.status).toBe(201);
  return res.json.data;
}

export function getTemplate(key: string, id: string) {
  return call<TemplateDetail>('GET', `/api/v1/templates/${id}`, { token: key });
}
