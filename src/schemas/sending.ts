// The sending fields of routes 1, 3 and the batch beyond the contract's: scheduling, cc/bcc/reply-to,
// tags, custom headers and attachments, and who the mail is from.
import { z } from '@hono/zod-openapi';
import { parseMailbox } from '../mail/address';
import { ATTACHMENT_LIMITS, DANGEROUS_EXTENSIONS, DANGEROUS_TYPES, dangerousAttachment } from '../mail/attachments';
import { addressList, caseless, hasFields, resourceId } from './common';

/** How far ahead a send may be scheduled. */
export const MAX_SCHEDULE_DAYS = 30;
/** to, cc and bcc together. */
export const MAX_RECIPIENTS = 100;

/** A date and time with seconds optional and a zone (Z or ±hh:mm): what Date.parse reads the same everywhere. */
const ISO_TIME =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/** The date is a day of its month: Date.parse reads 2026-02-30 as March 2. */
const isCalendarDay = (value: string) =>
  new Date(`${value.slice(0, 10)}T00:00:00Z`).getUTCDate() === Number(value.slice(8, 10));

/** An ISO 8601 time with a zone, in the future, as ISO in UTC. */
export const futureTime = z
  .string()
  .regex(ISO_TIME, 'expected an ISO 8601 time with a time zone, e.g. 2026-12-01T09:00:00Z')
  .refine(isCalendarDay, 'expected a day its month has')
  .transform((value) => new Date(value).toISOString())
  .refine((iso) => Date.parse(iso) > Date.now(), 'must be in the future');

export const futureTimeDoc = { format: 'date-time', pattern: ISO_TIME.source } as const;

export const scheduledAt = futureTime
  .refine(
    (iso) => Date.parse(iso) <= Date.now() + MAX_SCHEDULE_DAYS * 86_400_000,
    `must be at most ${MAX_SCHEDULE_DAYS} days ahead`,
  )
  .openapi({
    ...futureTimeDoc,
    description: `When to send: ISO 8601 with a time zone, in the future and at most ${MAX_SCHEDULE_DAYS} days ahead (400 otherwise); the email is SCHEDULED until then`,
  });

const TAG_TEXT = /^[A-Za-z0-9_-]{1,256}$/;
const tagText = z
  .string()
  .regex(TAG_TEXT, 'expected 1-256 letters, digits, _ or -')
  .openapi({ pattern: TAG_TEXT.source });

export const tags = z
  .array(z.strictObject({ name: tagText, value: tagText }))
  .max(10, 'at most 10 tags')
  .refine((list) => new Set(list.map((t) => t.name)).size === list.length, 'must not repeat a tag name')
  .openapi({ description: 'Up to 10 tags, unique names; filter the send log with tag=name:value' });

/** Header names a sender may set: the unsubscribe pair, X-Entity-Ref-ID and any X-*. */
const ALLOWED_HEADER = /^(?:List-Unsubscribe|List-Unsubscribe-Post|X-[!-9;-~]{1,72})$/i;
const MAX_HEADERS = 20;

export const customHeaders = z
  .record(
    z.string().regex(ALLOWED_HEADER, 'only List-Unsubscribe, List-Unsubscribe-Post and X-* headers may be set'),
    z
      .string()
      .min(1, 'must not be empty')
      .max(900, 'must be at most 900 characters')
      .refine((value) => !/[\r\n\0]/.test(value), 'must not contain CR, LF or NUL')
      .openapi({ pattern: '^[^\\r\\n\\x00]*$' }),
  )
  .refine((headers) => Object.keys(headers).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`)
  .refine(
    (headers) => new Set(Object.keys(headers).map((name) => name.toLowerCase())).size === Object.keys(headers).length,
    'must not repeat a header name',
  )
  .openapi({
    // JSON Schema 2020-12 (OpenAPI 3.1) has propertyNames; the metadata type does not know it.
    ...({ propertyNames: { pattern: caseless(ALLOWED_HEADER.source) } } as object),
    maxProperties: MAX_HEADERS,
    description: `Extra headers: List-Unsubscribe, List-Unsubscribe-Post, X-Entity-Ref-ID and any X-*; never From, To, Subject, Message-ID or Bcc. At most ${MAX_HEADERS}, names compared case-insensitively must not repeat; values are one line.`,
  });

// One character class and a length check: a grouped repetition would overflow the regex stack on 13 MB.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
// `u`: the length counts characters, as the document's pattern does.
const FILENAME_RULE = /^[^\x00-\x1f\x7f/\\]{1,255}$/u;
/** FILENAME_RULE and the refinements below, for the document: no surrounding spaces, not only dots, not executable. */
const FILENAME_DOC = `^(?!\\s)(?![\\s\\S]*\\s$)(?!\\.+$)(?![\\s\\S]*\\.(?:${caseless([...DANGEROUS_EXTENSIONS].join('|'))})$)${FILENAME_RULE.source.slice(1)}`;
const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+$/;
/** MEDIA_TYPE without the executable and script types, for the document. */
const MEDIA_TYPE_DOC = `^(?!${caseless(DANGEROUS_TYPES.source.slice(1, -1))}$)${MEDIA_TYPE.source.slice(1)}`;

const attachment = z
  .strictObject({
    filename: z
      .string()
      .regex(FILENAME_RULE, 'expected 1-255 characters without control characters, / or \\')
      .refine((name) => name.trim() === name && !/^\.+$/.test(name), 'expected a file name, not a path')
      .refine((name) => !dangerousAttachment(name, null), 'this file type is refused (executable or script)')
      .openapi({ pattern: FILENAME_DOC }),
    content: z
      .string()
      .min(1, 'must not be empty (a 0-byte file)')
      .regex(BASE64, 'expected base64')
      .refine((text) => text.length % 4 === 0, 'expected base64 (padded to a multiple of 4 characters)')
      .openapi({ format: 'byte', description: 'The file, base64 (standard alphabet, padded)' })
      .optional(),
    path: z
      .string()
      .max(2048, 'must be at most 2048 characters')
      .openapi({ format: 'uri', description: 'An https URL postcode fetches when the email is accepted' })
      .optional(),
    contentType: z
      .string()
      .max(127)
      .regex(MEDIA_TYPE, 'expected a media type such as application/pdf')
      .refine((type) => !dangerousAttachment('', type), 'this file type is refused (executable or script)')
      .openapi({ pattern: MEDIA_TYPE_DOC })
      .optional(),
    contentId: z
      .string()
      .regex(/^[A-Za-z0-9._@-]{1,100}$/, 'expected 1-100 letters, digits, . _ @ or -')
      .optional()
      .openapi({ description: 'Makes the attachment inline: reference it as cid:<contentId> in html' }),
  })
  .refine((a) => (a.content === undefined) !== (a.path === undefined), {
    message: 'expected exactly one of content or path',
    path: ['content'],
  })
  .openapi({ oneOf: [{ required: ['content'] }, { required: ['path'] }] });

export const attachments = z
  .array(attachment)
  .max(ATTACHMENT_LIMITS.count, `at most ${ATTACHMENT_LIMITS.count} attachments`)
  .refine(
    (list) => list.reduce((sum, a) => sum + decodedSize(a.content ?? ''), 0) <= ATTACHMENT_LIMITS.bytes,
    `at most ${ATTACHMENT_LIMITS.bytes / 1_000_000} MB decoded per email`,
  )
  .openapi({
    description: `Up to ${ATTACHMENT_LIMITS.count} files, at most ${ATTACHMENT_LIMITS.bytes / 1_000_000} MB decoded together; executables and scripts are refused`,
  });

export type AttachmentInput = z.output<typeof attachment>;

function decodedSize(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/** The fields routes 1, 3 and the batch share beyond the contract's. */
export const sendingFields = {
  cc: addressList(MAX_RECIPIENTS, 'Cc: one address or a list').optional(),
  bcc: addressList(MAX_RECIPIENTS, 'Bcc: one address or a list; never shown in any header').optional(),
  replyTo: addressList(10, 'Reply-To: one address or a list of up to 10').optional(),
  scheduledAt: scheduledAt.optional(),
  tags: tags.optional(),
  headers: customHeaders.optional(),
  attachments: attachments.optional(),
};

// The document's pattern for `from` is narrower than what the server takes (quoted local parts and IDN domains
// pass too): every value it admits is a mailbox the server accepts.
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const PLAIN_ADDRESS = `${ATOM}{1,30}(?:\\.${ATOM}{1,15}){0,2}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,20}[A-Za-z0-9])?\\.){1,4}[A-Za-z]{2,20}`;
const DISPLAY_NAME = '[^"\\\\<>\\x00-\\x1f\\x7f]{0,200}';

/** `from`: `Name <address>` or a bare address, parsed into the sender's mailbox. */
const fromMailbox = z
  .string()
  .transform((raw, ctx) => {
    const mailbox = parseMailbox(raw);
    if (!mailbox) {
      ctx.addIssue({ code: 'custom', message: 'expected an address or `Name <address>`' });
      return z.NEVER;
    }
    return mailbox;
  })
  .openapi({
    pattern: `^(?:${PLAIN_ADDRESS}|(?:"${DISPLAY_NAME}"|${DISPLAY_NAME}) ?<${PLAIN_ADDRESS}>)$`,
    description:
      "The sender: `Name <address>` or an address. The address must be a verified sender of the account or an address on its verified (or partially verified) domain; the display name may differ from the sender's stored name. Not with senderEmailId",
    example: 'Acme <hello@acme.example>',
  });

/** Who the mail is from: a verified sender of the account, by address or by id (one of them, or neither). */
export const senderFields = {
  from: fromMailbox.optional(),
  senderEmailId: resourceId
    .optional()
    .openapi({ description: 'A verified sender of the account (its id). Not with from' }),
};
export const ONE_SENDER: [(body: { from?: unknown; senderEmailId?: unknown }) => boolean, z.core.$ZodCustomParams] = [
  (body) => body.from === undefined || body.senderEmailId === undefined,
  { message: 'give from or senderEmailId, not both', path: ['from'] },
];
/** What ONE_SENDER says, for the document. */
export const ONE_SENDER_DOC = { not: hasFields('from', 'senderEmailId') };

/** to + cc + bcc together (after duplicates are dropped) are at most 100 recipients. */
export function recipientCount(body: { to: string[]; cc?: string[]; bcc?: string[] }): number {
  return body.to.length + (body.cc?.length ?? 0) + (body.bcc?.length ?? 0);
}

export const TOO_MANY_RECIPIENTS = `to, cc and bcc together must be at most ${MAX_RECIPIENTS} recipients`;
