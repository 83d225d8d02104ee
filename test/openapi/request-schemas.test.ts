// The document's request schemas say what the server enforces: a body the server refuses (400) is invalid by
// the route's documented schema too, and a body the documented schema allows is accepted. Where a rule is a
// pattern, the pattern and the server's own check are compared over many strings.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseIpRange } from '../../src/auth/ip-allowlist';
import { checkAddress } from '../../src/mail/address';
import { isLanguageTag } from '../../src/otp/languages';
import { call, newAccount, type TestAccount, UNLIMITED, uniqueAddress } from '../support/api';
import { credentialFor, declaredRoutes, fillPath, type JsonSchema, tokenOf } from '../support/declared-routes';

const routes = declaredRoutes();
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
const validators = new Map<string, ValidateFunction>();

/** The route's documented JSON body schema, compiled once. */
function documented(name: string): ValidateFunction {
  let validate = validators.get(name);
  if (!validate) {
    const route = routes.find((r) => r.name === name);
    expect(route?.jsonBody, `${name} takes a JSON body`).toBeDefined();
    validate = ajv.compile(route!.jsonBody!.schema);
    validators.set(name, validate);
  }
  return validate;
}

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount('request schemas');
});

/** Sends `body` to the route as its happy path would (its credential, this account), without rate limits. */
function send(name: string, body: unknown) {
  const route = routes.find((r) => r.name === name)!;
  const path = fillPath(route, (param) => (param === 'accountId' ? account.accountId : 'tpl_unknown00000000000'));
  return call(route.method, path, { token: tokenOf(account, credentialFor(route)), body, bindings: UNLIMITED });
}

const day = 86_400_000;
const at = (offset: number, time = '09:00:00Z') =>
  `${new Date(Date.now() + offset).toISOString().slice(0, 10)}T${time}`;
const emoji = (count: number) => '\u{1F600}'.repeat(count);
const mail = () => ({ to: uniqueAddress('schema'), subject: 'Hello', text: 'Hi' });
const attachment = { filename: 'a.txt', content: 'SGk=' };

/** Bodies the server refuses: [route, what is wrong, body]. */
const REFUSED: [string, string, () => unknown][] = [
  ['POST /api/v1/emails', 'empty html as the only content', () => ({ ...mail(), text: undefined, html: '' })],
  ['POST /api/v1/emails', 'empty text as the only content', () => ({ ...mail(), text: '' })],
  ['POST /api/v1/emails/batch', 'an email whose only content is empty', () => ({ emails: [{ ...mail(), text: '' }] })],
  ['POST /api/v1/templates', 'empty htmlBody alone', () => ({ name: 'n', subject: 's', htmlBody: '' })],
  ['POST /api/v1/templates', 'empty textBody alone', () => ({ name: 'n', subject: 's', textBody: '' })],
  ['POST /api/v1/emails', 'scheduledAt at hour 24', () => ({ ...mail(), scheduledAt: at(day, '24:00:00Z') })],
  [
    'POST /api/v1/emails',
    'scheduledAt with offset +24:00',
    () => ({ ...mail(), scheduledAt: at(day, '09:00:00+24:00') }),
  ],
  ['POST /api/v1/emails', 'a local part of 65 characters', () => ({ ...mail(), to: `${'a'.repeat(65)}@example.com` })],
  ['POST /api/v1/emails', 'a domain ending in a hex number', () => ({ ...mail(), to: 'ada@example.0x1f' })],
  ['POST /api/v1/emails', 'a domain that is not IDNA', () => ({ ...mail(), cc: 'ada@\u0080.example' })],
  [
    'POST /api/v1/emails',
    'an attachment without content or path',
    () => ({ ...mail(), attachments: [{ filename: 'a.txt' }] }),
  ],
  [
    'POST /api/v1/emails',
    'an attachment with content and path',
    () => ({ ...mail(), attachments: [{ ...attachment, path: 'https://files.example/a.txt' }] }),
  ],
  [
    'POST /api/v1/emails',
    'a file name with a trailing space',
    () => ({ ...mail(), attachments: [{ ...attachment, filename: 'a.txt ' }] }),
  ],
  [
    'POST /api/v1/emails',
    'a file name of dots',
    () => ({ ...mail(), attachments: [{ ...attachment, filename: '..' }] }),
  ],
  [
    'POST /api/v1/emails',
    'an executable file name',
    () => ({ ...mail(), attachments: [{ ...attachment, filename: 'setup.EXE' }] }),
  ],
  [
    'POST /api/v1/emails',
    'an executable media type',
    () => ({ ...mail(), attachments: [{ ...attachment, contentType: 'application/x-msdownload' }] }),
  ],
  [
    'POST /api/v1/emails',
    'a header value with a line break',
    () => ({ ...mail(), headers: { 'X-Ref': 'a\r\nBcc: x@y.example' } }),
  ],
  ['POST /api/v1/emails', 'a header that may not be set', () => ({ ...mail(), headers: { From: 'x@y.example' } })],
  [
    'POST /api/v1/emails',
    '21 headers',
    () => ({ ...mail(), headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])) }),
  ],
  ...['/api/v1/backend-otp/send', '/api/v1/email-verification/send', '/api/v1/instant-otp/send'].flatMap(
    (path): [string, string, () => unknown][] => [
      [
        `POST ${path}`,
        'templateId with subject',
        () => ({ email: uniqueAddress(), templateId: 'tpl_x1', subject: 'Code' }),
      ],
      [
        `POST ${path}`,
        'templateId with verificationLine',
        () => ({ email: uniqueAddress(), templateId: 'tpl_x1', verificationLine: 'Your code:' }),
      ],
    ],
  ),
  ...['de-1996-1996', 'x-private', 'i-klingon', 'en-gb-oed', 'de-u-co'].map(
    (locale): [string, string, () => unknown] => [
      'POST /api/v1/otp/send',
      `locale ${locale}`,
      () => ({ email: uniqueAddress(), locale }),
    ],
  ),
  ...[
    '1.2.3',
    '256.0.0.1',
    '01.2.3.4',
    '10.0.0.0/33',
    '10.0.0.0/',
    '::1/129',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    ' 1.2.3.4',
  ].map((entry): [string, string, () => unknown] => [
    'POST /admin/v1/accounts/{accountId}/otp-tokens',
    `allowedIps entry ${JSON.stringify(entry)}`,
    () => ({ allowedIps: [entry] }),
  ]),
  [
    'POST /admin/v1/accounts/{accountId}/api-keys',
    'a test key with server_otp',
    () => ({ scopes: ['server_otp'], mode: 'test' }),
  ],
  [
    'POST /admin/v1/accounts/{accountId}/api-keys',
    'a test key with both scopes',
    () => ({ scopes: ['mail_api', 'server_otp'], mode: 'test' }),
  ],
  [
    'POST /admin/v1/accounts/{accountId}/senders',
    'a quote in the name',
    () => ({ email: uniqueAddress(), name: 'A "B"' }),
  ],
  [
    'POST /admin/v1/accounts/{accountId}/senders',
    'a backslash in the name',
    () => ({ email: uniqueAddress(), name: 'A\\B' }),
  ],
  ['POST /admin/v1/accounts', 'a name of 201 characters', () => ({ name: emoji(201) })],
];

/** Bodies both accept (lengths count characters, as JSON Schema does, not UTF-16 units). */
const ACCEPTED: [string, string, () => unknown][] = [
  ['POST /admin/v1/accounts', 'a name of 200 emoji', () => ({ name: emoji(200) })],
  [
    'POST /api/v1/templates',
    'a subject of 998 emoji',
    () => ({ name: emoji(200), subject: emoji(998), textBody: 'x' }),
  ],
  ['POST /api/v1/emails', 'empty html beside text', () => ({ ...mail(), html: '' })],
  ['POST /api/v1/emails', 'a header value of 900 emoji', () => ({ ...mail(), headers: { 'X-Emoji': emoji(900) } })],
  [
    'POST /api/v1/emails',
    'an attachment named with emoji',
    () => ({ ...mail(), attachments: [{ ...attachment, filename: `${emoji(200)}.txt` }] }),
  ],
  [
    'POST /api/v1/backend-otp/send',
    'a verificationLine of 500 emoji',
    () => ({ email: uniqueAddress(), verificationLine: emoji(500) }),
  ],
  ...['zh-Hant-TW', 'es-419', 'ca-ES-valencia', 'de-CH-1996'].map((locale): [string, string, () => unknown] => [
    'POST /api/v1/backend-otp/send',
    `locale ${locale}`,
    () => ({ email: uniqueAddress(), locale }),
  ]),
  [
    'POST /admin/v1/accounts/{accountId}/otp-tokens',
    'IPv4, IPv6 and CIDR entries',
    () => ({
      allowedIps: ['203.0.113.0/24', '2001:db8::/32', '::ffff:192.0.2.1', '::', '1:2:3:4:5:6:7::', '10.0.0.1/032'],
    }),
  ],
  [
    'POST /admin/v1/accounts/{accountId}/api-keys',
    'a test key with mail_api',
    () => ({ scopes: ['mail_api'], mode: 'test' }),
  ],
  [
    'POST /admin/v1/accounts/{accountId}/senders',
    'an apostrophe in the name',
    () => ({ email: uniqueAddress(), name: "O'Brien & Co" }),
  ],
];

describe('request bodies: the document and the server agree', () => {
  for (const [name, what, body] of REFUSED) {
    it(`${name}: ${what} is refused by both`, async () => {
      const value = body();
      const res = await send(name, value);
      expect(res.status, JSON.stringify(res.json)).toBe(400);
      expect(documented(name)(value), `the document allows ${JSON.stringify(value).slice(0, 200)}`).toBe(false);
    });
  }
  for (const [name, what, body] of ACCEPTED) {
    it(`${name}: ${what} is accepted by both`, async () => {
      const value = body();
      const validate = documented(name);
      expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
      const res = await send(name, value);
      expect(res.status, JSON.stringify(res.json)).toBeLessThan(300);
    });
  }
});

/** Strings from `alphabet`, of 1-`maxLength` characters, the same on every run (a seeded generator). */
function strings(alphabet: string[], count: number, maxLength: number, seed = 42): string[] {
  let state = seed;
  // mulberry32
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return Array.from({ length: count }, () =>
    Array.from(
      { length: 1 + Math.floor(next() * maxLength) },
      () => alphabet[Math.floor(next() * alphabet.length)],
    ).join(''),
  );
}

type Schema = JsonSchema & { properties: Record<string, Schema>; items: Schema };

/** A field's documented pattern, as JSON Schema reads it (ECMA-262, `u` flag). */
function documentedPattern(name: string, field: (schema: Schema) => JsonSchema): RegExp {
  const schema = routes.find((r) => r.name === name)!.jsonBody!.schema as Schema;
  const pattern = field(schema).pattern;
  expect(pattern, `${name}: a documented pattern`).toBeDefined();
  return new RegExp(pattern!, 'u');
}

describe('documented patterns and the server checks they stand for', () => {
  /** `count` strings, each one element of every list in turn (seeded): e.g. a local part, `@` and a domain. */
  const joined = (count: number, ...parts: string[][]) =>
    parts
      .map((list, index) => strings(list, count, 1, 100 + index))
      .reduce((acc, picks) => acc.map((prefix, i) => prefix + picks[i]));

  it('allowedIps: the pattern accepts exactly what the server parses', () => {
    const pattern = documentedPattern(
      'POST /admin/v1/accounts/{accountId}/otp-tokens',
      (s) => s.properties.allowedIps!.items,
    );
    const octets = ['0', '1', '9', '10', '99', '100', '249', '255', '256', '01', ''];
    const groups = ['0', 'f', 'ffff', 'db8', '12345', '', 'g'];
    const colons = [':', ':', ':', '::', ':::'];
    const prefixes = ['', '', '/0', '/8', '/32', '/33', '/032', '/0032', '/128', '/129', '/', '/1/2', ' '];
    const samples = [
      ...joined(4000, octets, ['.'], octets, ['.', ''], octets, ['.'], octets, prefixes),
      ...joined(6000, groups, colons, groups, colons, groups, colons, ['0', '1.2.3.4', '', '01.2.3.4'], prefixes),
      ...joined(3000, groups, colons, groups, colons, groups, colons, groups, colons, groups, colons, groups, prefixes),
      ...strings([...'0123456789abcdefABCDEF:./'], 4000, 24, 7),
    ];
    const disagreements = samples.filter(
      (entry) => pattern.test(entry) !== (entry.trim() === entry && parseIpRange(entry) !== null),
    );
    expect(disagreements.slice(0, 10)).toEqual([]);
    const accepted = samples.filter((entry) => pattern.test(entry));
    expect(accepted.filter((entry) => entry.includes(':')).length).toBeGreaterThan(100);
    expect(accepted.filter((entry) => !entry.includes(':')).length).toBeGreaterThan(100);
  });

  it('locale: every tag the pattern accepts is a well-formed BCP 47 tag', () => {
    const pattern = documentedPattern('POST /api/v1/backend-otp/send', (s) => s.properties.locale!);
    const subtags = ['de', 'abc', 'abcde', 'Latn', 'US', '419', '1996', 'valencia', 'x', 'u', 'co', '1', 'ab1de'];
    const samples = [
      ...joined(5000, subtags, ['-', ''], subtags, ['-', ''], subtags, ['-', ''], subtags),
      ...strings([...'aZ09-'], 5000, 14, 3),
    ];
    const accepted = samples.filter((tag) => pattern.test(tag));
    expect(accepted.filter((tag) => !isLanguageTag(tag)).slice(0, 10)).toEqual([]);
    expect(accepted.length).toBeGreaterThan(300);
  });

  it('addresses: every address the pattern accepts is one the server accepts', () => {
    const pattern = documentedPattern('POST /api/v1/backend-otp/send', (s) => s.properties.email!);
    const local = ['a', 'Z', '0', '.', '-', '+', '"', '\\', ' ', '@', 'ab', ''];
    const label = ['ab', 'c0', 'xn--ab', '0x1f', '0x', '1', 'A', '-a', 'a-', '\u00e4', '\u0080', 'com', ''];
    const samples = [
      ...joined(20_000, local, local, local, ['@'], label, ['.', '-', ''], label, ['.', '.', '..'], label),
      `${'a'.repeat(64)}@example.com`,
      `${'a'.repeat(65)}@example.com`,
      `"${'a'.repeat(62)}"@example.com`,
      `"${'a'.repeat(63)}"@example.com`,
      `a@${'b'.repeat(63)}.com`,
      `a@${'b'.repeat(64)}.com`,
    ];
    const accepted = samples.filter((address) => pattern.test(address) && address.length <= 254);
    expect(accepted.filter((address) => !checkAddress(address).ok).slice(0, 10)).toEqual([]);
    expect(accepted.length).toBeGreaterThan(300);
  });
});

describe('scheduledAt: what no schema can say is in the description', () => {
  it('the window (in the future, at most 30 days ahead) and a day its month has', async () => {
    const route = routes.find((r) => r.name === 'POST /api/v1/emails')!;
    const documentedField = route.jsonBody!.schema.properties!.scheduledAt! as JsonSchema & {
      format?: string;
      description?: string;
    };
    expect(documentedField.format).toBe('date-time'); // RFC 3339: a day its month has
    expect(documentedField.description).toMatch(/in the future and at most 30 days ahead \(400 otherwise\)/);
    for (const [scheduledAt, message] of [
      [at(-day), 'scheduledAt: must be in the future'],
      [at(40 * day), 'scheduledAt: must be at most 30 days ahead'],
      [`${new Date().getUTCFullYear() + 1}-02-30T09:00:00Z`, 'scheduledAt: expected a day its month has'],
      [`${new Date().getUTCFullYear() + 1}-04-31T09:00:00Z`, 'scheduledAt: expected a day its month has'],
    ]) {
      const res = await send('POST /api/v1/emails', { ...mail(), scheduledAt });
      expect(res.status, scheduledAt).toBe(400);
      expect(res.json.error.message, scheduledAt).toBe(message);
    }
  });
});
