// The rules of a string under its schema: lengths, the document's pattern (with the message a person can act on)
// and the formats the request schemas use. No Node built-ins, as validate.ts.
import type { Schema } from './validate.js';

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const regexps = new Map<string, RegExp>();
/** The document's patterns are ECMA-262 with Unicode semantics (as JSON Schema says); compiled once. */
function regexp(pattern: string): RegExp {
  let compiled = regexps.get(pattern);
  if (!compiled) {
    compiled = new RegExp(pattern, 'u');
    regexps.set(pattern, compiled);
  }
  return compiled;
}

/** The service accepts an address on an internationalised domain the ASCII pattern leaves out, when IDNA takes it. */
function internationalAddress(value: string, pattern: RegExp): boolean {
  const at = value.lastIndexOf('@');
  const domain = value.slice(at + 1);
  if (at < 1 || (/^[\x20-\x7e]*$/.test(domain) && !/(^|\.)xn--/i.test(domain))) return false;
  try {
    const ascii = new URL(`http://${domain}/`).hostname;
    return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(ascii) && pattern.test(`${value.slice(0, at)}@example.com`);
  } catch {
    return false;
  }
}

/** A real calendar day: the pattern lets 2026-02-31 through, Date.parse rolls it into March. */
function realDateTime(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day && !Number.isNaN(Date.parse(value));
}

/** `owns` its pattern: the document's pattern is the format's own (so failing it is failing the format). */
const FORMATS: Record<string, { test: (value: string) => boolean; expected: string; owns?: boolean }> = {
  email: { test: () => true, expected: 'an email address', owns: true },
  'date-time': {
    test: realDateTime,
    expected: 'an ISO 8601 date-time with a time zone, e.g. 2026-12-01T09:00:00Z',
    owns: true,
  },
  uri: {
    test: (value) => {
      try {
        return Boolean(new URL(value));
      } catch {
        return false;
      }
    },
    expected: 'a URL',
  },
  byte: { test: (value) => value.length % 4 === 0, expected: 'base64 (standard alphabet, padded)', owns: true },
};
/** The formats this checks. */
export const FORMAT_NAMES: ReadonlySet<string> = new Set(Object.keys(FORMATS));

/** A failed pattern in words: the description's first sentence when there is one, else a short pattern itself. */
function patternMessage(pattern: string, description: string | undefined): string {
  if (description) return `does not match: ${description.split(/(?<=\.) /)[0]!.replace(/\.$/, '')}`;
  // `(?![\s\S])` after `$` only says "no trailing newline" to engines whose `$` allows one; JS's never does.
  const shown = pattern.replace(/\(\?!\[\\s\\S\]\)$/, '');
  return shown.length <= 60 ? `must match ${shown}` : 'is not in the form the document allows';
}

export function checkString(schema: Schema, value: string, push: (message: string) => void) {
  if (schema.minLength !== undefined && value.length < schema.minLength) {
    push(schema.minLength === 1 ? 'must not be empty' : `must be at least ${plural(schema.minLength, 'character')}`);
  }
  // Lengths in UTF-16 code units, as the service counts them.
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    push(`must be at most ${plural(schema.maxLength, 'character')}`);
  }
  const format = schema.format === undefined ? undefined : FORMATS[schema.format];
  if (schema.pattern !== undefined) {
    const pattern = regexp(schema.pattern);
    if (!pattern.test(value) && !(schema.format === 'email' && internationalAddress(value, pattern))) {
      const formatFailed = format && (format.owns || !format.test(value));
      push(formatFailed ? `expected ${format.expected}` : patternMessage(schema.pattern, schema.description));
      return;
    }
  }
  if (format && !format.test(value)) push(`expected ${format.expected}`);
}
