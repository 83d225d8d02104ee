// What the CLI prints: text for a person when stdout is a terminal, JSON otherwise (or with --json), so a script
// piping it reads JSON without asking. Errors are always `{"error": …}` on stderr with nothing on stdout. No Node
// built-ins (the streams come in as Io), so the workers tests run the formatting as it is.

/** Where the output goes; main.ts gives process.stdout and process.stderr. */
export type Io = {
  out: (text: string) => void;
  err: (text: string) => void;
  /** stdout is a terminal. */
  isTTY: boolean;
};

export type Mode = 'human' | 'json';

/** Human text only on a terminal and without --json. */
export const modeOf = (json: boolean, isTTY: boolean): Mode => (json || !isTTY ? 'json' : 'human');

/** An error as the CLI reports it: the service's (with its status and request id) or the CLI's own (both null). */
export type ErrorBody = {
  code: string;
  message: string;
  status: number | null;
  requestId: string | null;
  details?: { path: string; message: string }[];
  retryAfterSeconds?: number;
  /** With a usage error: the command's synopsis. */
  usage?: string;
};

export const json = (data: unknown) => `${JSON.stringify(data, null, 2)}\n`;

/** One line on stderr, whatever the mode: a person reads it as well as a script parses it. */
export const errorLine = (error: ErrorBody) => `${JSON.stringify({ error })}\n`;

const cell = (value: unknown) =>
  value === undefined || value === null ? '' : String(value).replace(/[\r\n\t]+/g, ' ');

/** Columns padded to their widest cell (the last one left ragged); no rows: `(none)`. */
export function table(headers: string[], rows: unknown[][]): string {
  if (rows.length === 0) return '(none)\n';
  const cells = [headers, ...rows.map((row) => row.map(cell))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((value, column) => (column === row.length - 1 ? value : value.padEnd(widths[column] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
    .concat('\n');
}

/** `label: value` lines, labels aligned; empty values left out. */
export function fields(pairs: [string, unknown][]): string {
  const shown = pairs.filter(([, value]) => value !== undefined && value !== null && value !== '');
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${cell(value)}\n`).join('');
}

/** A list's text: the table, then how to go on when the page is not the last. */
export function pageText(text: string, page: { total?: number; nextCursor?: string | null }, shown: number): string {
  const total = page.total === undefined ? '' : ` of ${page.total}`;
  const more = page.nextCursor ? `; the next page: --after ${page.nextCursor} (or --all)` : '';
  return `${text}${shown}${total} shown${more}\n`;
}
