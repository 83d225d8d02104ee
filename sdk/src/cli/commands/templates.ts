// `postcode templates pull|push`: the account's templates as a folder (template-folder.ts) to keep in version
// control. Pull writes every template into it; push makes the account's templates what the folder says.
import { resolve } from 'node:path';
import type { Postcode } from '../../index.js';
import { type Command, dataOf, localFailure } from '../command.js';
import { everyItem } from '../lists.js';
import { table } from '../output.js';
import { requestSchemas } from '../request-schemas.js';
import {
  FILES,
  folderFor,
  foldersById,
  type LocalTemplate,
  readTemplates,
  type Template,
  writeTemplate,
} from '../template-folder.js';
import { type Problem, validate } from '../validate.js';

const DIR_ARG = [{ name: 'dir', summary: 'The templates folder (default ./templates)' }];
const FIELDS = ['name', 'subject', 'htmlBody', 'textBody'] as const;

const templateOf = ({ name, subject, htmlBody, textBody }: LocalTemplate): Template => ({
  name,
  subject,
  htmlBody,
  textBody,
});

type Outcome = { folder: string; id: string | null; name: string; action: string; changed: string[] };

const outcomeText = (dir: string, outcomes: Outcome[]) =>
  `${table(
    ['ACTION', 'FOLDER', 'ID', 'CHANGED'],
    outcomes.map((o) => [o.action, o.folder, o.id, o.changed.join(', ')]),
  )}${outcomes.length} template${outcomes.length === 1 ? '' : 's'} in ${dir}\n`;

const pull: Command = {
  path: ['templates', 'pull'],
  summary: "Writes the account's templates into a folder, one folder each",
  args: DIR_ARG,
  flags: [],
  details: `Each template goes to <dir>/<folder>/: meta.json ({ id, name, subject }), content.html and content.txt
(absent when the body is empty). A folder whose meta.json has the template's id keeps its name; a new one is
named after the template. Folders of templates the account does not have are left as they are.

  postcode templates pull ./templates`,
  async run(ctx) {
    const dir = resolve(ctx.args.dir ?? 'templates');
    const pc = ctx.client();
    const byId = foldersById(dir);
    const taken = new Set(byId.values());
    const outcomes: Outcome[] = [];
    for (const item of await everyItem(pc.templates.list({ limit: 100 }))) {
      const template = dataOf(await pc.templates.get(item.id));
      let folder = byId.get(template.id);
      const created = folder === undefined;
      if (folder === undefined) {
        folder = folderFor(template.name, taken);
        taken.add(folder);
      }
      const changed = writeTemplate(dir, folder, template.id, template);
      const action = created ? 'created' : changed.length ? 'updated' : 'unchanged';
      outcomes.push({ folder, id: template.id, name: template.name, action, changed });
    }
    return { data: { dir, templates: outcomes }, human: () => outcomeText(dir, outcomes) };
  },
};

/** A template's problems under the document's schema, named by the folder's file. */
function problemsOf(local: LocalTemplate): Problem[] {
  const fileOf = (field: string) =>
    field === 'htmlBody' || field === 'textBody' ? FILES[field] : `${FILES.meta}: ${field}`;
  return validate(requestSchemas.postApiV1Templates, templateOf(local)).map((problem) => ({
    path: problem.path === 'body' ? local.folder : `${local.folder}/${fileOf(problem.path)}`,
    message: problem.message.replace(/htmlBody|textBody/g, (field) => FILES[field as 'htmlBody' | 'textBody']),
  }));
}

/** The fields of `local` that differ from the account's template. */
async function changes(pc: Postcode, local: LocalTemplate & { id: string }): Promise<Partial<Template>> {
  const result = await pc.templates.get(local.id);
  if (result.error?.code === 'TEMPLATE_NOT_FOUND') {
    throw localFailure(
      'TEMPLATE_NOT_FOUND',
      `${local.folder}/${FILES.meta}: no template ${local.id} in this account (remove the id to create it anew)`,
    );
  }
  const remote = dataOf(result);
  return Object.fromEntries(FIELDS.filter((f) => remote[f] !== local[f]).map((f) => [f, local[f]]));
}

const push: Command = {
  path: ['templates', 'push'],
  summary: "Creates and updates the account's templates from a folder (--dry-run: shows what would change)",
  args: DIR_ARG,
  flags: [{ name: 'dry-run', type: 'boolean', summary: 'Shows what would change; changes nothing' }],
  details: `A folder without an id in meta.json is created (and its id written there); one with an id updates that
template with the fields that differ. Every folder is checked against the document's schema before anything is
sent. Templates the folder does not have are left as they are.

  postcode templates push ./templates`,
  async run(ctx) {
    const dir = resolve(ctx.args.dir ?? 'templates');
    const dryRun = ctx.flags.boolean('dry-run');
    const locals = readTemplates(dir);
    const problems = locals.flatMap(problemsOf);
    if (problems[0]) throw localFailure('INVALID_INPUT', `${problems[0].path}: ${problems[0].message}`, problems);
    const pc = ctx.client();
    const outcomes: Outcome[] = [];
    for (const local of locals) {
      const base = { folder: local.folder, name: local.name };
      if (local.id === undefined) {
        let id: string | null = null;
        if (!dryRun) {
          id = dataOf(await pc.templates.create(withoutEmptyBodies(templateOf(local)))).id;
          writeTemplate(dir, local.folder, id, local); // the next push updates it instead of creating another
        }
        outcomes.push({ ...base, id, action: dryRun ? 'would create' : 'created', changed: [...FIELDS] });
        continue;
      }
      const change = await changes(pc, local as LocalTemplate & { id: string });
      const changed = Object.keys(change);
      if (changed.length && !dryRun) dataOf(await pc.templates.update(local.id, change));
      const action = !changed.length ? 'unchanged' : dryRun ? 'would update' : 'updated';
      outcomes.push({ ...base, id: local.id, action, changed });
    }
    return { data: { dir, dryRun, templates: outcomes }, human: () => outcomeText(dir, outcomes) };
  },
};

/** A create names only the bodies it has (an empty one is no body). */
const withoutEmptyBodies = (template: Template) => ({
  name: template.name,
  subject: template.subject,
  ...(template.htmlBody ? { htmlBody: template.htmlBody } : {}),
  ...(template.textBody ? { textBody: template.textBody } : {}),
});

export const templateCommands: Command[] = [pull, push];
