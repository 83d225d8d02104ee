// What a command of the `postcode` CLI is: where it sits in the tree, the flags and arguments it takes, and what
// it does with them. A command returns what to print (its JSON and, for a terminal, its text) or throws a
// CliFailure; main.ts prints either, so no command writes to stdout or stderr itself.
import type { Postcode, PostcodeError, Result } from '../index.js';
import type { Flags } from './args.js';
import type { ErrorBody, Io } from './output.js';

export type FlagSpec = {
  /** The long name, without `--`. */
  name: string;
  /** `string` takes a value; `list` takes one each time it is given (repeatable); `boolean` takes none. */
  type: 'string' | 'list' | 'boolean';
  /** The value's placeholder in the help, e.g. `ADDRESS`. */
  value?: string;
  summary: string;
  required?: boolean;
};

export type ArgSpec = { name: string; summary: string; required?: boolean };

/** The key and base URL a command runs with, each from its flag, else the environment, else `postcode login`. */
export type Settings = { apiKey?: string; baseUrl?: string };

export type Context = {
  /** Positional arguments by their ArgSpec name. */
  args: Record<string, string | undefined>;
  flags: Flags;
  env: Record<string, string | undefined>;
  io: Io;
  /** The resolved key and base URL (read on first use); a command that can do without them reads this. */
  settings(): Settings;
  /** A client of the resolved key and base URL: a missing one is the CLI's error (exit 1). */
  client(): Postcode;
  /** Asks on the terminal; absent when stdin is not a terminal. */
  prompt?: (question: string) => Promise<string>;
};

/**
 * What a command answers: `data` is printed as JSON; `human`, when given, is the terminal's text of it. A command
 * that printed as it went (a stream of lines) answers `data: undefined`.
 */
export type Printed = { data: unknown; human?: () => string };

export type Command = {
  /** The words that name it: `['emails', 'send']` is `postcode emails send`. */
  path: string[];
  summary: string;
  /** The synopsis in the help; made from the path and args when absent. */
  usage?: string;
  flags: FlagSpec[];
  args?: ArgSpec[];
  /** Longer help: examples, rules. */
  details?: string;
  run(ctx: Context): Promise<Printed>;
};

/** A failure to report: printed as `{"error": body}` on stderr with nothing on stdout; exit 1, or 2 for usage. */
export class CliFailure extends Error {
  constructor(
    readonly body: ErrorBody,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(body.message);
    this.name = 'CliFailure';
  }
}

/** A mistake in the command line itself (exit 2). */
export const usageError = (message: string, usage?: string) =>
  new CliFailure({ code: 'USAGE', message, status: null, requestId: null, ...(usage ? { usage } : {}) }, 2);

/** A failure found by the CLI before or without an answer from the service (exit 1). */
export const localFailure = (code: string, message: string, details?: { path: string; message: string }[]) =>
  new CliFailure({ code, message, status: null, requestId: null, ...(details?.length ? { details } : {}) });

/** The service's error as the CLI reports it. */
export const apiFailure = (error: PostcodeError) => new CliFailure({ ...error });

/** The answer's data, or its error thrown as the CLI's failure. */
export function dataOf<T>(result: Result<T>): T {
  if (result.error) throw apiFailure(result.error);
  return result.data;
}

export const usageOf = (command: Command) =>
  command.usage ??
  [
    'postcode',
    ...command.path,
    ...(command.args ?? []).map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)),
    '[flags]',
  ].join(' ');
