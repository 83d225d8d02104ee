// A request body checked against its schema from the served document (request-schemas.ts) before anything is sent:
// the JSON Schema keywords those schemas use, with problems named as the service names them (`tags[1].name`).
// No Node built-ins, so the workers tests run it as it is.
import { checkString, plural } from './string-rules.js';

export type Schema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  minProperties?: number;
  maxProperties?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  not?: Schema;
};

export type Problem = { path: string; message: string };

/** Every keyword this checks: a schema with another one is refused by the tests (a rule would pass unchecked). */
export const KEYWORDS: ReadonlySet<string> = new Set(
  [
    'type description properties required additionalProperties propertyNames minProperties maxProperties',
    'items minItems maxItems uniqueItems enum const minLength maxLength pattern format',
    'minimum maximum exclusiveMinimum exclusiveMaximum multipleOf anyOf oneOf allOf not',
  ]
    .join(' ')
    .split(' '),
);

type Path = (string | number)[];

/** `emails[3].attachments[0].filename`, as the service's INVALID_INPUT details name a field; the whole body: `body`. */
export function describePath(path: Path): string {
  if (path.length === 0) return 'body';
  return path.reduce<string>((out, key, index) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    return index === 0 ? key : `${out}.${key}`;
  }, '');
}

const typeOf = (value: unknown) =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
const hasType = (type: string, value: unknown) =>
  type === typeOf(value) || (type === 'number' && typeof value === 'number' && Number.isFinite(value));
const isObject = (value: unknown): value is Record<string, unknown> => typeOf(value) === 'object';
const equal = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
const or = (words: string[]) =>
  words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;

function checkNumber(schema: Schema, value: number, push: (message: string) => void) {
  if (schema.minimum !== undefined && value < schema.minimum) push(`must be at least ${schema.minimum}`);
  if (schema.maximum !== undefined && value > schema.maximum) push(`must be at most ${schema.maximum}`);
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) {
    push(`must be more than ${schema.exclusiveMinimum}`);
  }
  if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) {
    push(`must be less than ${schema.exclusiveMaximum}`);
  }
  if (schema.multipleOf !== undefined && !Number.isInteger(value / schema.multipleOf)) {
    push(`must be a multiple of ${schema.multipleOf}`);
  }
}

function checkArray(schema: Schema, value: unknown[], path: Path, out: Problem[]) {
  const push = (message: string) => out.push({ path: describePath(path), message });
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    push(`must have at least ${plural(schema.minItems, 'item')}`);
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    push(`must have at most ${plural(schema.maxItems, 'item')}`);
  }
  if (schema.uniqueItems && new Set(value.map((item) => JSON.stringify(item))).size !== value.length) {
    push('must not repeat an item');
  }
  const items = schema.items;
  if (items) {
    for (const [index, item] of value.entries()) check(items, item, [...path, index], out);
  }
}

function checkObject(schema: Schema, value: Record<string, unknown>, path: Path, out: Problem[]) {
  const names = Object.keys(value);
  const push = (message: string) => out.push({ path: describePath(path), message });
  if (schema.minProperties !== undefined && names.length < schema.minProperties) {
    push(`must have at least ${plural(schema.minProperties, 'field')}`);
  }
  if (schema.maxProperties !== undefined && names.length > schema.maxProperties) {
    push(`must have at most ${plural(schema.maxProperties, 'field')}`);
  }
  for (const name of schema.required ?? []) {
    if (!(name in value)) out.push({ path: describePath([...path, name]), message: 'is required' });
  }
  for (const name of names) {
    const field = value[name];
    const at = [...path, name];
    if (schema.propertyNames) {
      if (validate(schema.propertyNames, name).length)
        out.push({ path: describePath(at), message: 'is not an allowed name' });
    }
    const declared = schema.properties?.[name];
    if (declared) check(declared, field, at, out);
    else if (schema.additionalProperties === false)
      out.push({ path: describePath(at), message: 'is not a known field' });
    else if (typeof schema.additionalProperties === 'object') check(schema.additionalProperties, field, at, out);
  }
}

/** Alternatives in words: `html or text` for required fields, `a string or an array` for types. */
function describe(schema: Schema): string {
  if (schema.required?.length) return schema.required.join(' and ');
  if (schema.type !== undefined) return or([schema.type].flat().map(article));
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return or(branches.map((branch) => `(${describe(branch)})`));
  return 'another shape';
}

/**
 * The problems of the alternative the value was meant as: the only one whose type fits and whose required fields
 * are all there (then its own problems say what is wrong); none when that is not clear.
 */
function meant(branches: Schema[], value: unknown, path: Path): Problem[] | null {
  const fitting = branches.filter(
    (branch) =>
      (branch.type === undefined || [branch.type].flat().some((type) => hasType(type, value))) &&
      (!isObject(value) || (branch.required ?? []).every((name) => name in value)) &&
      (branch.type !== undefined || branch.required?.length),
  );
  return fitting.length === 1 ? sub(fitting[0]!, value, path) : null;
}

function sub(schema: Schema, value: unknown, path: Path): Problem[] {
  const out: Problem[] = [];
  check(schema, value, path, out);
  return out;
}

function checkCombinations(schema: Schema, value: unknown, path: Path, out: Problem[]) {
  const push = (message: string) => out.push({ path: describePath(path), message });
  for (const branch of schema.allOf ?? []) check(branch, value, path, out);
  const alternatives = (branches: Schema[]) =>
    branches.every((branch) => branch.type !== undefined)
      ? `expected ${or(branches.map(describe))}`
      : `needs ${or(branches.map(describe))}`;
  if (schema.anyOf && !schema.anyOf.some((branch) => sub(branch, value, path).length === 0)) {
    out.push(
      ...(meant(schema.anyOf, value, path) ?? [{ path: describePath(path), message: alternatives(schema.anyOf) }]),
    );
  }
  if (schema.oneOf) {
    const matching = schema.oneOf.filter((branch) => sub(branch, value, path).length === 0);
    if (matching.length > 1) push(`must have only one of ${or(matching.map(describe))}`);
    else if (matching.length === 0) {
      out.push(
        ...(meant(schema.oneOf, value, path) ?? [{ path: describePath(path), message: alternatives(schema.oneOf) }]),
      );
    }
  }
  if (schema.not && sub(schema.not, value, path).length === 0) {
    const which = (schema.not.anyOf ?? [schema.not]).find((branch) => sub(branch, value, path).length === 0);
    push(which?.required?.length ? `must not have ${which.required.join(' and ')} together` : 'is not allowed');
  }
}

function check(schema: Schema, value: unknown, path: Path, out: Problem[]) {
  const push = (message: string) => out.push({ path: describePath(path), message });
  if (schema.type !== undefined) {
    const types = [schema.type].flat();
    if (!types.some((type) => hasType(type, value))) {
      push(`expected ${or(types.map(article))}`);
      return;
    }
  }
  if (schema.const !== undefined && !equal(schema.const, value)) push(`must be ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.some((allowed) => equal(allowed, value))) {
    push(`must be one of ${schema.enum.map((allowed) => JSON.stringify(allowed)).join(', ')}`);
  }
  if (typeof value === 'string') checkString(schema, value, push);
  else if (typeof value === 'number') checkNumber(schema, value, push);
  else if (Array.isArray(value)) checkArray(schema, value, path, out);
  else if (isObject(value)) checkObject(schema, value, path, out);
  checkCombinations(schema, value, path, out);
}

/** What is wrong with `value` under `schema` (nothing: it is valid). */
export function validate(schema: Schema, value: unknown): Problem[] {
  return sub(schema, value, []);
}
