// The body of `postcode emails send`: a JSON file (--file, `-` for stdin) as the base, each flag given setting its
// field over it; and the request a --dry-run shows instead of sending, checked against the document's schema.
import { readFileSync } from 'node:fs';
import type { BodyOf } from '../index.js';
import type { Flags } from './args.js';
import { keyValue } from './args.js';
import { type FlagSpec, localFailure } from './command.js';
import { requestSchemas } from './request-schemas.js';
import { validate } from './validate.js';

export type SendBody = BodyOf<'postApiV1Emails'>;

export const SEND_FLAGS: FlagSpec[] = [
  { name: 'file', type: 'string', value: 'PATH', summary: 'A JSON body to start from (- reads stdin)' },
  { name: 'from', type: 'string', value: 'SENDER', summary: 'The sender: an address or "Name <address>"' },
  { name: 'to', type: 'list', value: 'ADDRESS', summary: 'A recipient' },
  { name: 'cc', type: 'list', value: 'ADDRESS', summary: 'A Cc recipient' },
  { name: 'bcc', type: 'list', value: 'ADDRESS', summary: 'A Bcc recipient' },
  { name: 'reply-to', type: 'list', value: 'ADDRESS', summary: 'A Reply-To address' },
  { name: 'subject', type: 'string', value: 'TEXT', summary: 'The subject (one line)' },
  { name: 'text', type: 'string', value: 'TEXT', summary: 'The plain-text body' },
  { name: 'html', type: 'string', value: 'HTML', summary: 'The HTML body' },
  { name: 'template-id', type: 'string', value: 'ID', summary: 'A saved template to make the mail from' },
  { name: 'var', type: 'list', value: 'NAME=VALUE', summary: 'A value for a {{NAME}} placeholder' },
  { name: 'tag', type: 'list', value: 'NAME=VALUE', summary: 'A tag: letters, digits, _ and -' },
  { name: 'scheduled-at', type: 'string', value: 'TIME', summary: 'When to send (ISO 8601 with a time zone)' },
  { name: 'priority', type: 'string', value: 'URGENT|NORMAL', summary: 'The queue priority' },
  { name: 'idempotency-key', type: 'string', value: 'KEY', summary: 'Sends once per key (else one per run)' },
  { name: 'dry-run', type: 'boolean', summary: 'Checks the body and shows the request; sends nothing' },
];

/** A file's JSON object (`-`: stdin's); what is wrong with it as the CLI's failure. */
export function readJsonObject(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw localFailure('FILE_UNREADABLE', `${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw localFailure('INVALID_INPUT', `${path} is not JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw localFailure('INVALID_INPUT', `${path}: expected a JSON object (one email's body)`);
  }
  return value as Record<string, unknown>;
}

/** One address as a string, several as a list (both are what the API takes). */
const addresses = (list: string[]) => (list.length === 1 ? list[0] : list);

/**
 * The file's body with the flags over it: a flag replaces its field (a repeatable one gives the whole list, the
 * file's list is not added to), except --var, which sets one key of `vars` and keeps the file's others.
 */
export function sendBody(flags: Flags): Record<string, unknown> {
  const path = flags.string('file');
  const body: Record<string, unknown> = path === undefined ? {} : readJsonObject(path);
  const lists: [string, string][] = [
    ['to', 'to'],
    ['cc', 'cc'],
    ['bcc', 'bcc'],
    ['reply-to', 'replyTo'],
  ];
  for (const [flag, field] of lists) if (flags.list(flag).length) body[field] = addresses(flags.list(flag));
  const strings: [string, string][] = [
    ['from', 'from'],
    ['subject', 'subject'],
    ['text', 'text'],
    ['html', 'html'],
    ['template-id', 'templateId'],
    ['scheduled-at', 'scheduledAt'],
    ['priority', 'priority'],
  ];
  for (const [flag, field] of strings) {
    const value = flags.string(flag);
    if (value !== undefined) body[field] = value;
  }
  if (flags.list('tag').length) {
    body.tags = flags.list('tag').map((tag) => {
      const [name, value] = keyValue('tag', tag);
      return { name, value };
    });
  }
  if (flags.list('var').length) {
    const vars = typeof body.vars === 'object' && body.vars !== null ? { ...(body.vars as object) } : {};
    for (const entry of flags.list('var')) {
      const [name, value] = keyValue('var', entry);
      (vars as Record<string, string>)[name] = value;
    }
    body.vars = vars;
  }
  return body;
}

/** The body's problems under the document's schema, as the CLI's INVALID_INPUT (as the service would answer). */
export function checkSendBody(body: Record<string, unknown>): SendBody {
  const problems = validate(requestSchemas.postApiV1Emails, body);
  const first = problems[0];
  if (first) throw localFailure('INVALID_INPUT', `${first.path}: ${first.message}`, problems);
  return body as SendBody;
}

/** What a send would ask: method, URL, headers (the key never shown) and body. */
export function dryRunRequest(body: SendBody, baseUrl: string | undefined, idempotencyKey: string | undefined) {
  return {
    method: 'POST',
    url: `${(baseUrl ?? '').replace(/\/+$/, '')}/api/v1/emails`,
    headers: {
      Authorization: 'Bearer [redacted]',
      'Content-Type': 'application/json',
      'Idempotency-Key': idempotencyKey ?? '(generated when sent)',
    },
    body,
  };
}

/** The dry run's request as a person reads an HTTP request. */
export function dryRunText(request: ReturnType<typeof dryRunRequest>): string {
  const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${value}\n`);
  return `Dry run: the body matches the document's schema; nothing was sent.

${request.method} ${request.url}
${headers.join('')}
${JSON.stringify(request.body, null, 2)}
`;
}
