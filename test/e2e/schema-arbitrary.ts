// fast-check arbitraries from the JSON Schemas of the served OpenAPI document: values a client reading only
// the document would send (valid by the schema), and mutations of them (what a careless or hostile one sends).
import fc from 'fast-check';

export type Schema = {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  not?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  maxProperties?: number;
  minProperties?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
};

/** Arrays and maps stay short: the requests are about shapes, not volume. */
const MAX_GENERATED_ITEMS = 3;

const emailArbitrary = fc
  .tuple(fc.stringMatching(/^[a-z0-9]{1,12}$/), fc.constantFrom('example.com', 'example.org', 'mail.example'))
  .map(([local, domain]) => `${local}@${domain}`);

/** The pattern without its lookaround groups (balanced parentheses; escapes and classes skipped). */
function withoutLookarounds(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    if (!/^\(\?<?[=!]/.test(pattern.slice(i, i + 4))) {
      out += pattern[i];
      if (pattern[i] === '\\') out += pattern[++i] ?? '';
      continue;
    }
    let depth = 0;
    let inClass = false;
    for (; i < pattern.length; i++) {
      const ch = pattern[i];
      if (ch === '\\') i++;
      else if (inClass) inClass = ch !== ']';
      else if (ch === '[') inClass = true;
      else if (ch === '(') depth++;
      else if (ch === ')' && --depth === 0) break;
    }
  }
  return out;
}

/** fast-check cannot generate lookarounds: generate without them, keep only what the whole pattern matches. */
function patternArbitrary(pattern: string, minLength: number, maxLength: number): fc.Arbitrary<string> {
  const full = new RegExp(pattern, 'u');
  return fc
    .stringMatching(new RegExp(withoutLookarounds(pattern)))
    .filter((value) => full.test(value) && value.length >= minLength && value.length <= maxLength);
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = schema.maxLength ?? 10_000;
  if (schema.format === 'email' && !schema.pattern) return emailArbitrary;
  if (schema.format === 'uri') {
    const fits = (u: string) => u.length <= maxLength && (!schema.pattern || new RegExp(schema.pattern, 'u').test(u));
    return fc.webUrl({ validSchemes: ['https'], withQueryParameters: true }).filter(fits);
  }
  if (schema.format === 'date-time') {
    // Around now, so that windows such as scheduledAt's are hit as well as missed.
    return fc
      .integer({ min: -2 * 86_400_000, max: 40 * 86_400_000 })
      .map((ms) => new Date(Date.now() + ms).toISOString());
  }
  if (schema.format === 'byte')
    return fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => btoa(String.fromCharCode(...b)));
  if (schema.pattern) return patternArbitrary(schema.pattern, minLength, maxLength);
  return fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 40) });
}

function objectArbitrary(schema: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  // `anyOf` beside `properties`: each alternative adds required fields and narrows their schemas.
  const alternatives: Schema[] = schema.anyOf?.length ? schema.anyOf : [{}];
  const forbiddenTogether = schema.not?.required;
  return fc.constantFrom(...alternatives).chain((alternative) => {
    const properties = { ...schema.properties };
    for (const [name, narrower] of Object.entries(alternative.properties ?? {})) {
      properties[name] = { ...properties[name], ...narrower };
    }
    const required = new Set([...(schema.required ?? []), ...(alternative.required ?? [])]);
    const record = fc.record(
      Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, arbitraryOf(s, depth + 1)])),
      { requiredKeys: [...required].filter((name) => name in properties) },
    );
    const map =
      typeof schema.additionalProperties === 'object'
        ? fc.dictionary(
            schema.propertyNames
              ? (arbitraryOf({ type: 'string', ...schema.propertyNames }, depth + 1) as fc.Arbitrary<string>)
              : fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,15}$/),
            arbitraryOf(schema.additionalProperties, depth + 1),
            { maxKeys: Math.min(MAX_GENERATED_ITEMS, schema.maxProperties ?? MAX_GENERATED_ITEMS) },
          )
        : fc.constant({});
    return fc
      .tuple(map, record)
      .map(([m, r]) => ({ ...m, ...r }) as Record<string, unknown>)
      .filter((value) => Object.keys(value).length >= (schema.minProperties ?? 0))
      .filter((value) => !forbiddenTogether?.every((name) => name in value));
  });
}

/** Values valid by the schema (as far as its keywords go; `not` beyond `required` is not honoured). */
export function arbitraryOf(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 6) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if ((schema.anyOf || schema.oneOf) && !schema.properties) {
    return fc.oneof(...(schema.anyOf ?? schema.oneOf)!.map((s) => arbitraryOf({ ...s }, depth + 1)));
  }
  if (schema.allOf) return arbitraryOf(Object.assign({}, ...schema.allOf, { allOf: undefined }), depth);
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((type) => arbitraryOf({ ...schema, type }, depth)));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'string':
      return stringArbitrary(schema);
    case 'array': {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.min(schema.maxItems ?? MAX_GENERATED_ITEMS, Math.max(minLength, MAX_GENERATED_ITEMS));
      const items = arbitraryOf(schema.items ?? {}, depth + 1);
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength });
    }
    case 'object':
      return objectArbitrary(schema, depth);
    default:
      return schema.properties ? objectArbitrary(schema, depth) : fc.jsonValue({ maxDepth: 2 });
  }
}

/** Mostly valid values, and some with one field broken, one field too many, or anything at all. */
export function bodyArbitrary(schema: Schema): fc.Arbitrary<unknown> {
  const valid = arbitraryOf(schema);
  const brokenField = valid.chain((value) =>
    value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0
      ? fc
          .tuple(fc.constantFrom(...Object.keys(value)), fc.jsonValue({ maxDepth: 2 }))
          .map(([key, junk]) => ({ ...value, [key]: junk }))
      : fc.constant(value),
  );
  const extraField = valid.map((value) =>
    value && typeof value === 'object' && !Array.isArray(value) ? { ...value, unexpectedField: 1 } : value,
  );
  return fc.oneof(
    { arbitrary: valid, weight: 6 },
    { arbitrary: brokenField, weight: 2 },
    { arbitrary: extraField, weight: 1 },
    { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 },
  );
}

/**
 * The schema with a choice of real values beside each property named in `known` (at any depth), so that
 * generated bodies also reach past lookups (a template or sender that exists).
 */
export function withKnownValues(schema: Schema, known: Record<string, unknown[]>): Schema {
  const properties = schema.properties
    ? Object.fromEntries(
        Object.entries(schema.properties).map(([name, s]) => {
          const inner = withKnownValues(s, known);
          return [name, known[name] ? { anyOf: [{ enum: known[name] }, inner] } : inner];
        }),
      )
    : undefined;
  return {
    ...schema,
    ...(properties ? { properties } : {}),
    ...(schema.items ? { items: withKnownValues(schema.items, known) } : {}),
  };
}
