import { z } from '@hono/zod-openapi';
import { ApiError } from '../errors';
import { checkAddress, uniqueAddresses } from '../mail/address';
import { type Cursor, decodeCursor, type PageRequest } from '../store/paging';
import { optionalQueryInt, queryInt } from '../validation';

// The `pattern`s below document in the OpenAPI document what the zod rules enforce, so generated
// clients and fuzzers see the same rules as the server.

const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
/** An ASCII label the URL parser keeps as it is: letters, digits, inner hyphens, and not `xn--` (punycode it checks). */
export const LABEL = '(?![Xx][Nn]--)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** A last label the URL parser reads as a number (an IPv4 part): decimal, or hex after 0x. */
const NUMBER_LABEL = '(?:[0-9]+|0[Xx][0-9A-Fa-f]*)(?![A-Za-z0-9-])';
/**
 * A local part of 1-64 characters before the last `@`, dot-atom or quoted; a domain of at least two ASCII labels
 * whose last is not a number. Internationalised domains are left out: which are valid IDNA no pattern can say.
 */
export const ADDRESS_PATTERN = `^(?=[\\x20-\\x7e]{1,64}@[^@]*$)(?:${ATOM}(?:\\.${ATOM})*|"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\x20-\\x7e])*")@(?:${LABEL}\\.)+(?!${NUMBER_LABEL})${LABEL}$`;

/** A domain name of ASCII labels (two at least, the last not a number), at most 253 characters, not localhost. */
export const DOMAIN_PATTERN = `^(?=.{1,253}$)(?!(?:[^.]*\\.)*[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt]$)(?:${LABEL}\\.)+(?!${NUMBER_LABEL})${LABEL}$`;

const ADDRESS_DOC = {
  type: 'string' as const,
  format: 'email',
  maxLength: 254,
  pattern: ADDRESS_PATTERN,
  description:
    'An email address: a dot-atom or quoted local part (at most 64 characters) and a domain with at least one dot. The pattern covers ASCII domains; an internationalised domain (Unicode, or xn-- punycode) is accepted too when it is a valid IDNA name, and is sent as punycode',
};

/** One email address, validated and normalised (punycode domain). */
export const emailAddress = z
  .string({ error: 'expected an email address' })
  .transform((value, ctx) => {
    const result = checkAddress(value);
    if (!result.ok) {
      ctx.addIssue({ code: 'custom', message: result.reason });
      return z.NEVER;
    }
    return result.address;
  })
  .openapi(ADDRESS_DOC);

export const subjectText = z
  .string()
  .min(1, 'must not be empty')
  .max(998, 'must be at most 998 characters')
  .refine((value) => !/[\r\n\0]/.test(value), 'must not contain line breaks')
  .openapi({ pattern: '^[^\\r\\n\\x00]*$', description: 'One line: no CR, LF or NUL' });

export const priority = z.enum(['URGENT', 'NORMAL']);

export const resourceId = z.string().min(3, 'must be 3-128 characters').max(128, 'must be 3-128 characters');

/** One address or a list of 1-`max`; duplicates are dropped (sent once). */
export const addressList = (max: number, description: string) =>
  z
    .union([z.string(), z.array(z.string()).min(1).max(max)], {
      error: `expected an email address or a list of 1-${max} addresses`,
    })
    .transform((value, ctx) => {
      const list = typeof value === 'string' ? [value] : value;
      const addresses: string[] = [];
      list.forEach((item, index) => {
        const result = checkAddress(item);
        if (result.ok) addresses.push(result.address);
        else ctx.addIssue({ code: 'custom', message: result.reason, path: typeof value === 'string' ? [] : [index] });
      });
      return uniqueAddresses(addresses);
    })
    .openapi({
      anyOf: [ADDRESS_DOC, { type: 'array', items: ADDRESS_DOC, minItems: 1, maxItems: max }],
      description: `${description}; duplicates (compared case-insensitively) are sent once`,
    });

/** `to`: one address or a list of 1-100. */
export const recipients = addressList(100, 'One address or a list of 1-100');

/** Names and labels (accounts, keys, templates, senders): one line of text, no control characters. */
export const label = z
  .string()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((value) => !/[\x00-\x1f\x7f]/.test(value), 'must not contain control characters or line breaks')
  .openapi({ pattern: '^[^\\x00-\\x1f\\x7f]*$', description: 'One line: no control characters' });

/** Mail bodies may hold any text but NUL, which SMTP cannot carry. */
export const bodyText = z
  .string()
  .refine((value) => !value.includes('\0'), 'must not contain NUL characters')
  .openapi({ pattern: '^[^\\x00]*$', description: 'Any text but NUL' });

/** `vars`: flat values only (nested values → 400). */
export const templateVars = z
  .record(z.string(), z.union([bodyText, z.number(), z.boolean()]))
  .openapi({ description: 'Values for the {{name}} placeholders: strings, numbers or booleans (no nesting)' });

/**
 * A regex source whose letters match in either case, for the document: JSON Schema patterns take no `i` flag.
 * Escapes (`\.`, `\x1f`) and character classes are kept as they are.
 */
export function caseless(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const length = source[i + 1] === 'x' ? 4 : source[i + 1] === 'u' ? 6 : 2;
      out += source.slice(i, i + length);
      i += length - 1;
      continue;
    }
    if (c === '[') inClass = true;
    if (c === ']') inClass = false;
    out += !inClass && /[A-Za-z]/.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c;
  }
  return out;
}

/** For the document's `not`: a body that has all these fields (each named in `properties` too, for linters). */
export const hasFields = (...fields: string[]) => ({
  required: fields,
  properties: Object.fromEntries(fields.map((field) => [field, {}])),
});

/** The document's "one of these fields, and not empty" (an empty string does not count as given). */
export const oneNotEmpty = (fields: string[]) => ({
  anyOf: fields.map((field) => ({ required: [field], properties: { [field]: { minLength: 1 } } })),
});

/** Success envelope. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

/** Give it as `after` for the next page; null on the last page. */
export const NEXT_CURSOR = z
  .string()
  .nullable()
  .openapi({ description: 'Give it as `after` for the next page; null on the last page' });

/** A page of a list: `{ [key]: items, total, page, totalPages, nextCursor }` (the send log, suppressions, deliveries). */
export const pageOf = <K extends string, T extends z.ZodType>(key: K, item: T) =>
  envelope(
    z.object({
      [key]: z.array(item),
      total: z.number().int(),
      page: z.number().int(),
      totalPages: z.number().int(),
      nextCursor: NEXT_CURSOR,
    } as { [P in K]: z.ZodArray<T> } & {
      total: z.ZodNumber;
      page: z.ZodNumber;
      totalPages: z.ZodNumber;
      nextCursor: typeof NEXT_CURSOR;
    }),
  );

/**
 * Error envelope (decisions.md): the code, a message naming the field, optional details, resetAt and
 * retryAfterSeconds, and the request's id (docs/decisions.md).
 */
export const errorEnvelope = <const Codes extends readonly [string, ...string[]]>(codes: Codes) =>
  z.object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(codes),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      resetAt: z.string().optional(),
      retryAfterSeconds: z
        .number()
        .int()
        .optional()
        .openapi({ description: 'With 429: the Retry-After header in seconds, for scripts that cannot read headers' }),
      requestId: z
        .string()
        .openapi({ description: 'The X-Request-Id of this answer: quote it when asking about the request' }),
    }),
  });

const cursorText = z
  .string()
  .transform((text, ctx) => {
    const cursor = decodeCursor(text);
    if (cursor === null) ctx.addIssue({ code: 'custom', message: 'expected the nextCursor of a page of this list' });
    return cursor as Cursor;
  })
  .optional()
  .openapi({
    type: 'string',
    pattern: '^[A-Za-z0-9_-]+$',
    description:
      'The page after the one whose `nextCursor` this is (instead of `page`): a deep page costs no more than the first',
  });

/** The query of every paged list: `page` or `after`, and `limit`. */
export const pageQuery = z.object({
  page: optionalQueryInt(1, 1_000_000).openapi({ default: 1, description: 'The page number, from 1 (or give after)' }),
  limit: queryInt(1, 100, 20),
  after: cursorText,
});

/** Where the page a query asks for starts; `page` and `after` together are refused. */
export function pageRequest(query: { page?: number; limit: number; after?: Cursor }): PageRequest {
  if (query.page !== undefined && query.after !== undefined) {
    throw new ApiError('INVALID_INPUT', 'after: give page or after, not both');
  }
  return { limit: query.limit, page: query.after?.page ?? query.page ?? 1, after: query.after ?? null };
}

/** The `data` of a page of a list (`pageOf`): its items, the total, the page and the next page's cursor. */
export function pageData<K extends string, V>(
  key: K,
  page: { items: V[]; total: number; nextCursor: string | null },
  request: PageRequest,
) {
  return {
    [key]: page.items,
    total: page.total,
    page: request.page,
    totalPages: Math.ceil(page.total / request.limit),
    nextCursor: page.nextCursor,
  } as { [P in K]: V[] } & { total: number; page: number; totalPages: number; nextCursor: string | null };
}
