// The folder `postcode templates pull|push` keeps templates in, one folder each:
//
//   templates/welcome/meta.json      {"id": "tpl_…", "name": "Welcome", "subject": "Welcome, {{name}}"}
//   templates/welcome/content.html   the htmlBody, byte for byte (absent: none)
//   templates/welcome/content.txt    the textBody, byte for byte (absent: none)
//
// A folder without an id in meta.json is a template push creates (and then writes the id into).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { localFailure } from './command.js';

export type Template = { name: string; subject: string; htmlBody: string; textBody: string };
export type LocalTemplate = Template & { folder: string; id?: string };
type Problem = { path: string; message: string };

export const FILES = { meta: 'meta.json', htmlBody: 'content.html', textBody: 'content.txt' } as const;
const META_FIELDS = new Set(['id', 'name', 'subject']);

const readText = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');

/** The folders that hold a meta.json, by name. */
function templateFolders(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((entry) => !entry.startsWith('.') && statSync(join(dir, entry)).isDirectory())
    .filter((entry) => existsSync(join(dir, entry, FILES.meta)))
    .sort();
}

function readMeta(dir: string, folder: string, problems: Problem[]): Record<string, unknown> | null {
  const path = `${folder}/${FILES.meta}`;
  let meta: unknown;
  try {
    meta = JSON.parse(readFileSync(join(dir, folder, FILES.meta), 'utf8'));
  } catch (error) {
    problems.push({ path, message: `not JSON: ${(error as Error).message}` });
    return null;
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    problems.push({ path, message: 'expected an object: {"id", "name", "subject"}' });
    return null;
  }
  const fields = meta as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!META_FIELDS.has(key)) problems.push({ path: `${path}: ${key}`, message: 'is not a known field' });
  }
  for (const key of ['id', 'name', 'subject']) {
    const value = fields[key];
    if (value !== undefined && typeof value !== 'string')
      problems.push({ path: `${path}: ${key}`, message: 'expected a string' });
    else if (value === undefined && key !== 'id') problems.push({ path: `${path}: ${key}`, message: 'is required' });
  }
  return fields;
}

/** Every template of the folder; a folder that cannot be read fails the whole read (INVALID_INPUT). */
export function readTemplates(dir: string): LocalTemplate[] {
  if (!existsSync(dir)) throw localFailure('FILE_UNREADABLE', `${dir}: no such folder`);
  const problems: Problem[] = [];
  const templates: LocalTemplate[] = [];
  for (const folder of templateFolders(dir)) {
    const meta = readMeta(dir, folder, problems);
    if (!meta) continue;
    templates.push({
      folder,
      ...(typeof meta.id === 'string' && meta.id ? { id: meta.id } : {}),
      name: String(meta.name ?? ''),
      subject: String(meta.subject ?? ''),
      htmlBody: readText(join(dir, folder, FILES.htmlBody)),
      textBody: readText(join(dir, folder, FILES.textBody)),
    });
  }
  const first = problems[0];
  if (first) throw localFailure('INVALID_INPUT', `${first.path}: ${first.message}`, problems);
  return templates;
}

/** The ids the folder already has, by folder (a folder that cannot be read is left out: pull rewrites it). */
export function foldersById(dir: string): Map<string, string> {
  const byId = new Map<string, string>();
  for (const folder of templateFolders(dir)) {
    try {
      const meta = JSON.parse(readFileSync(join(dir, folder, FILES.meta), 'utf8')) as { id?: unknown };
      if (typeof meta.id === 'string') byId.set(meta.id, folder);
    } catch {}
  }
  return byId;
}

/** A folder name for a template's name (`Welcome mail` → `welcome-mail`), not one of `taken`. */
export function folderFor(name: string, taken: Set<string>): string {
  const base =
    name
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'template';
  let folder = base;
  for (let n = 2; taken.has(folder); n++) folder = `${base}-${n}`;
  return folder;
}

const metaText = (id: string | undefined, template: Template) =>
  `${JSON.stringify({ ...(id ? { id } : {}), name: template.name, subject: template.subject }, null, 2)}\n`;

/** Writes one file if its content differs (empty: removes it); whether it changed. */
function put(path: string, content: string): boolean {
  const exists = existsSync(path);
  if (!content) {
    if (exists) rmSync(path);
    return exists;
  }
  if (exists && readFileSync(path, 'utf8') === content) return false;
  writeFileSync(path, content);
  return true;
}

/** Writes a template into its folder; the files that changed. */
export function writeTemplate(dir: string, folder: string, id: string | undefined, template: Template): string[] {
  mkdirSync(join(dir, folder), { recursive: true });
  const metaPath = join(dir, folder, FILES.meta);
  let metaChanged: boolean;
  try {
    // Compared as JSON, so a file formatted by hand is not rewritten for its spacing alone.
    const current = JSON.parse(readFileSync(metaPath, 'utf8')) as Record<string, unknown>;
    metaChanged =
      current.id !== id ||
      current.name !== template.name ||
      current.subject !== template.subject ||
      Object.keys(current).length !== (id ? 3 : 2);
  } catch {
    metaChanged = true;
  }
  if (metaChanged) writeFileSync(metaPath, metaText(id, template));
  const changed: string[] = metaChanged ? [FILES.meta] : [];
  if (put(join(dir, folder, FILES.htmlBody), template.htmlBody)) changed.push(FILES.htmlBody);
  if (put(join(dir, folder, FILES.textBody), template.textBody)) changed.push(FILES.textBody);
  return changed;
}
