// The command line after the command's words: `--flag value`, `--flag=value`, repeatable flags, booleans, `--`
// and positional arguments. Anything it does not know is a usage error (exit 2): a typo'd flag must not pass
// silently as "not given". No Node built-ins, so the workers tests run it as it is.
import { type ArgSpec, type FlagSpec, usageError } from './command.js';

/** The flags given, read by name. */
export class Flags {
  constructor(private readonly values: ReadonlyMap<string, string | string[] | true>) {}

  has(name: string): boolean {
    return this.values.has(name);
  }

  string(name: string): string | undefined {
    const value = this.values.get(name);
    return typeof value === 'string' ? value : undefined;
  }

  list(name: string): string[] {
    const value = this.values.get(name);
    return Array.isArray(value) ? value : [];
  }

  boolean(name: string): boolean {
    return this.values.get(name) === true;
  }

  /** A whole number (a `--limit`), or a usage error. */
  integer(name: string): number | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    if (!/^\d{1,9}$/.test(value)) throw usageError(`--${name} takes a whole number, not ${JSON.stringify(value)}`);
    return Number(value);
  }
}

export type Parsed = { flags: Flags; args: Record<string, string | undefined> };

const BOOLEAN_VALUES: Record<string, boolean> = { true: true, false: false };

/** Reads `tokens` by these flags and arguments; a usage error (naming `usage`) for anything else. */
export function parseArgs(tokens: string[], flagSpecs: FlagSpec[], argSpecs: ArgSpec[] = [], usage?: string): Parsed {
  const specs = new Map(flagSpecs.map((spec) => [spec.name, spec]));
  const values = new Map<string, string | string[] | true>();
  const positionals: string[] = [];
  const fail = (message: string) => usageError(message, usage);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '--') {
      positionals.push(...tokens.slice(i + 1));
      break;
    }
    if (token === '-h') {
      values.set('help', true);
      continue;
    }
    if (!token.startsWith('-') || token === '-') {
      positionals.push(token);
      continue;
    }
    if (!token.startsWith('--')) throw fail(`unknown flag ${token}`);
    const equals = token.indexOf('=');
    const name = token.slice(2, equals === -1 ? undefined : equals);
    const inline = equals === -1 ? undefined : token.slice(equals + 1);
    const spec = specs.get(name);
    if (!spec) throw fail(`unknown flag --${name}`);
    if (spec.type === 'boolean') {
      const value = inline === undefined ? true : BOOLEAN_VALUES[inline];
      if (value === undefined) throw fail(`--${name} takes no value (or =true, =false)`);
      if (value) values.set(name, true);
      else values.delete(name);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = tokens[i + 1];
      // `--subject --json` is a forgotten value, not a subject: a value starting with `--` goes as --subject=--….
      if (next === undefined || next.startsWith('--')) throw fail(`--${name} needs a value`);
      value = next;
      i++;
    }
    if (spec.type === 'list') values.set(name, [...((values.get(name) as string[] | undefined) ?? []), value]);
    else if (values.has(name)) throw fail(`--${name} given more than once`);
    else values.set(name, value);
  }
  for (const spec of flagSpecs) {
    if (spec.required && !values.has(spec.name) && !values.has('help')) throw fail(`--${spec.name} is required`);
  }
  if (positionals.length > argSpecs.length)
    throw fail(`unexpected argument ${JSON.stringify(positionals[argSpecs.length])}`);
  const args: Record<string, string | undefined> = {};
  argSpecs.forEach((spec, index) => {
    args[spec.name] = positionals[index];
    if (spec.required && positionals[index] === undefined && !values.has('help')) throw fail(`missing <${spec.name}>`);
  });
  return { flags: new Flags(values), args };
}

/** `name=value` (a tag, a var): split at the first `=`; a usage error without one. */
export function keyValue(flag: string, text: string): [string, string] {
  const equals = text.indexOf('=');
  if (equals < 1) throw usageError(`--${flag} takes name=value, not ${JSON.stringify(text)}`);
  return [text.slice(0, equals), text.slice(equals + 1)];
}
