// The CLI's check of a request body (sdk/src/cli/validate.ts) against the schemas of the served document
// (request-schemas.ts, string-rules.ts): what the service would refuse is named field by field, what it takes passes, and every
// keyword and format those schemas use is one the check knows.
import { describe, expect, it } from 'vitest';
import { requestSchemas } from '../../sdk/src/cli/request-schemas';
import { FORMAT_NAMES } from '../../sdk/src/cli/string-rules';
import { KEYWORDS, type Schema, validate } from '../../sdk/src/cli/validate';

const send = (body: unknown) => validate(requestSchemas.postApiV1Emails, body);
const paths = (problems: { path: string }[]) => problems.map((p) => p.path);

/** Every sub-schema of a schema, with its place. */
function* walk(schema: Schema, at = ''): Generator<[string, Schema]> {
  yield [at, schema];
  for (const [name, sub] of Object.entries(schema.properties ?? {})) yield* walk(sub, `${at}.${name}`);
  for (const key of ['items', 'not', 'propertyNames', 'additionalProperties'] as const) {
    const sub = schema[key];
    if (sub && typeof sub === 'object') yield* walk(sub, `${at}/${key}`);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const [n, sub] of (schema[key] ?? []).entries()) yield* walk(sub, `${at}/${key}/${n}`);
  }
}

describe('the schemas from the document', () => {
  it('use only keywords and formats the check knows, and patterns that compile as Unicode regexps', () => {
    for (const [operation, schema] of Object.entries(requestSchemas)) {
      for (const [at, sub] of walk(schema)) {
        for (const keyword of Object.keys(sub)) expect(KEYWORDS, `${operation}${at}: ${keyword}`).toContain(keyword);
        if (sub.format) expect(FORMAT_NAMES, `${operation}${at}: format`).toContain(sub.format);
        if (sub.pattern) expect(() => new RegExp(sub.pattern!, 'u'), `${operation}${at}`).not.toThrow();
      }
    }
  });
});

describe('emails send', () => {
  it("passes the document's full example and the short forms", () => {
    const full = {
      to: ['ada@example.com'],
      subject: 'Your receipt',
      html: '<p>Thanks, {{name}}!</p>',
      text: 'Thanks, {{name}}!',
      vars: { name: 'Ada', count: 2, vip: true },
      priority: 'NORMAL',
      cc: 'billing@example.com',
      bcc: 'audit@example.com',
      replyTo: 'support@example.com',
      tags: [{ name: 'category', value: 'receipt' }],
      headers: { 'X-Entity-Ref-ID': 'order-1234', 'List-Unsubscribe': '<https://acme.example/u>' },
      attachments: [{ filename: 'receipt.txt', content: 'VGhhbmtzIQ==', contentType: 'text/plain' }],
      scheduledAt: '2026-12-01T09:00:00+01:00',
      from: 'Acme <hello@acme.example>',
    };
    expect(send(full)).toEqual([]);
    expect(send({ to: 'ada@example.com', subject: 'Hi', templateId: 'tpl_abc' })).toEqual([]);
    expect(send({ to: 'ada@bücher.example', subject: 'Hi', text: 'an internationalised domain' })).toEqual([]);
  });

  it('names what is missing: to, subject, and a body of some kind', () => {
    expect(send({})).toEqual([
      { path: 'to', message: 'is required' },
      { path: 'subject', message: 'is required' },
      { path: 'body', message: 'needs html, text, imageUrl or templateId' },
    ]);
    expect(send({ to: 'a@example.com', subject: 'S', html: '' })).toEqual([
      { path: 'html', message: 'must not be empty' },
    ]);
    expect(send([])).toEqual([{ path: 'body', message: 'expected an object' }]);
  });

  it('names each field that breaks a rule, with its place in lists', () => {
    const problems = send({
      to: ['ada@example.com', 'not-an-address', 'x@-bad-.example'],
      subject: 'two\nlines',
      text: 'ok',
      priority: 'SOON',
      tags: [
        { name: 'fine', value: 'ok' },
        { name: 'has space', value: 'v', extra: 1 },
      ],
      headers: { From: 'me' },
      unknown: true,
    });
    expect(problems).toEqual([
      { path: 'to[1]', message: 'expected an email address' },
      { path: 'to[2]', message: 'expected an email address' },
      { path: 'subject', message: 'does not match: One line: no CR, LF or NUL' },
      { path: 'priority', message: 'must be one of "URGENT", "NORMAL"' },
      { path: 'tags[1].name', message: 'must match ^[A-Za-z0-9_-]{1,256}$' },
      { path: 'tags[1].extra', message: 'is not a known field' },
      { path: 'headers.From', message: 'is not an allowed name' },
      { path: 'unknown', message: 'is not a known field' },
    ]);
  });

  it('checks lengths, counts, formats and the combinations the document sets', () => {
    const base = { to: 'ada@example.com', subject: 'S', text: 'T' };
    const many = Array.from({ length: 101 }, (_, i) => `r${i}@example.com`);
    expect(send({ ...base, to: many })).toEqual([{ path: 'to', message: 'must have at most 100 items' }]);
    expect(send({ ...base, to: [] })).toEqual([{ path: 'to', message: 'must have at least 1 item' }]);
    expect(send({ ...base, to: 42 })).toEqual([{ path: 'to', message: 'expected a string or an array' }]);
    expect(send({ ...base, subject: 'x'.repeat(999) })).toEqual([
      { path: 'subject', message: 'must be at most 998 characters' },
    ]);
    expect(paths(send({ ...base, scheduledAt: '2026-02-31T10:00:00Z' }))).toEqual(['scheduledAt']);
    expect(paths(send({ ...base, scheduledAt: 'tomorrow' }))).toEqual(['scheduledAt']);
    expect(send({ ...base, imageUrl: 'http://insecure.example/a.png' })).toEqual([
      { path: 'imageUrl', message: 'must match ^https://' },
    ]);
    expect(send({ ...base, vars: { nested: { no: 1 } } })).toEqual([
      { path: 'vars.nested', message: 'expected a string, a number or a boolean' },
    ]);
    expect(send({ ...base, from: 'a@acme.example', senderEmailId: 'snd_abc' })).toEqual([
      { path: 'body', message: 'must not have from and senderEmailId together' },
    ]);
    const file = { filename: 'a.txt', content: 'YWJj', path: 'https://files.example/a.txt' };
    expect(send({ ...base, attachments: [file] })).toEqual([
      { path: 'attachments[0]', message: 'must have only one of content or path' },
    ]);
    expect(send({ ...base, attachments: [{ filename: 'a.txt' }] })).toEqual([
      { path: 'attachments[0]', message: 'needs content or path' },
    ]);
    expect(send({ ...base, attachments: [{ filename: 'a.txt', content: 'YWJ' }] })).toEqual([
      { path: 'attachments[0].content', message: 'expected base64 (standard alphabet, padded)' },
    ]);
    expect(paths(send({ ...base, attachments: [{ filename: 'run.exe', content: 'YWJj' }] }))).toEqual([
      'attachments[0].filename',
    ]);
  });
});

describe('templates', () => {
  const template = (body: unknown) => validate(requestSchemas.postApiV1Templates, body);

  it('needs a name, a subject and one body that is not empty', () => {
    expect(template({ name: 'Welcome', subject: 'Hi {{name}}', textBody: 'Hello' })).toEqual([]);
    expect(template({ name: 'Welcome', subject: 'Hi', htmlBody: '', textBody: '' })).toEqual([
      { path: 'body', message: 'needs htmlBody or textBody' },
    ]);
    expect(paths(template({ name: 'a\tb', subject: 'S', textBody: 'T' }))).toEqual(['name']);
  });
});

describe('keywords beyond the current schemas', () => {
  it('checks numbers, type lists, const, allOf, uniqueItems and object sizes', () => {
    const schema: Schema = {
      type: 'object',
      minProperties: 1,
      properties: {
        n: { type: 'integer', minimum: 1, maximum: 10, multipleOf: 2 },
        x: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        maybe: { type: ['string', 'null'] },
        fixed: { const: 'yes' },
        both: { allOf: [{ type: 'string' }, { minLength: 2 }] },
        set: { type: 'array', uniqueItems: true },
      },
    };
    expect(validate(schema, { n: 4, x: 0.5, maybe: null, fixed: 'yes', both: 'ab', set: [1, 2] })).toEqual([]);
    expect(validate(schema, {})).toEqual([{ path: 'body', message: 'must have at least 1 field' }]);
    expect(validate(schema, { n: 1.5, x: 1, maybe: 3, fixed: 'no', both: 'a', set: [1, 1] })).toEqual([
      { path: 'n', message: 'expected an integer' },
      { path: 'x', message: 'must be less than 1' },
      { path: 'maybe', message: 'expected a string or a null' },
      { path: 'fixed', message: 'must be "yes"' },
      { path: 'both', message: 'must be at least 2 characters' },
      { path: 'set', message: 'must not repeat an item' },
    ]);
    expect(validate(schema, { n: 12 })).toEqual([{ path: 'n', message: 'must be at most 10' }]);
    expect(validate(schema, { n: 3 })).toEqual([{ path: 'n', message: 'must be a multiple of 2' }]);
  });
});
