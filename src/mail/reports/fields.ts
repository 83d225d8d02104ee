// Header-like fields as reports carry them (RFC 3464 status parts, RFC 5965 feedback reports, and the same
// fields written into text parts), read leniently: folded lines joined, names lower-cased.

export type Fields = Map<string, string>;

/** Fields of each blank-line separated block (the first occurrence of a name counts). */
export function fieldBlocks(text: string): Fields[] {
  return text
    .replace(/\r\n/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((block) => fieldsOf(block.split('\n')))
    .filter((fields) => fields.size > 0);
}

function fieldsOf(lines: string[]): Fields {
  const fields: Fields = new Map();
  let last: string | null = null;
  for (const line of lines) {
    if (/^[ \t]/.test(line) && last) fields.set(last, `${fields.get(last)} ${line.trim()}`);
    else {
      const match = /^([A-Za-z][\w-]*)[ \t]*:(.*)$/.exec(line);
      last = match ? match[1]!.toLowerCase() : null;
      if (match && !fields.has(last!)) fields.set(last!, match[2]!.trim());
    }
  }
  return fields;
}

const RECIPIENT_FIELDS = new Set(['final-recipient', 'original-recipient', 'x-actual-recipient']);

/**
 * The per-recipient groups of a status part: blank-line separated, and where a server leaves the blank line
 * out, a recipient field the group already has begins the next one.
 */
export function recipientGroups(text: string): Fields[] {
  const groups: string[][] = [];
  let current: string[] = [];
  let names = new Set<string>();
  const close = () => {
    if ([...names].some((n) => RECIPIENT_FIELDS.has(n))) groups.push(current);
    current = [];
    names = new Set();
  };
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    if (/^[ \t]*$/.test(line)) {
      close();
      continue;
    }
    const name = /^([A-Za-z][\w-]*)[ \t]*:/.exec(line)?.[1]?.toLowerCase();
    if (name && RECIPIENT_FIELDS.has(name) && names.has(name)) close();
    if (name) names.add(name);
    current.push(line);
  }
  close();
  return groups.map(fieldsOf);
}

/** `rfc822; a@b` → `a@b`; `smtp; 550 …` → `550 …`. */
export const typed = (value: string | undefined) =>
  value === undefined ? undefined : value.replace(/^[\w-]+\s*;\s*/, '').trim();

const ADDRESS = /(?:"[^"\r\n]+"|[^\s<>()[\]"',;:]+)@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,}/;
export const ADDRESS_SOURCE = ADDRESS.source;

/** The first address in a value (`<a@b>`, `"Name" <a@b>`, `rfc822;a@b`), or null. */
export const addressIn = (value: string | undefined | null) =>
  value ? (ADDRESS.exec(value)?.[0]?.replace(/^mailto:/i, '') ?? null) : null;
