// `postcode --help`, `postcode <group> --help` and `postcode <group> <command> --help`, made from the command tree
// (registry.ts), so the help never lists a flag a command does not take.
import { type Command, type FlagSpec, usageOf } from './command.js';
import { table } from './output.js';

const flagLabel = (flag: FlagSpec) =>
  flag.type === 'boolean'
    ? `--${flag.name}`
    : `--${flag.name} ${flag.value ?? 'VALUE'}${flag.type === 'list' ? ' …' : ''}`;

const flagRows = (flags: FlagSpec[]) =>
  flags.map((flag) => [
    `  ${flagLabel(flag)}`,
    `${flag.summary}${flag.required ? ' (required)' : ''}${flag.type === 'list' ? ' (repeatable)' : ''}`,
  ]);

const indent = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => (line ? `  ${line}` : line))
    .join('\n');

/** A table without its header row. */
const rows = (values: string[][]) => table(['', ''], values).split('\n').slice(1).join('\n');

const commandRows = (commands: Command[]) => rows(commands.map((c) => [`  ${c.path.join(' ')}`, c.summary]));

export function rootHelp(commands: Command[], globalFlags: FlagSpec[]): string {
  return `postcode: transactional email and one-time codes from the command line

Usage: postcode <command> [flags]

Commands:
${commandRows(commands)}
Flags of every command:
${rows(flagRows(globalFlags))}
The key and base URL come from --api-key/--base-url, else POSTCODE_API_KEY/POSTCODE_BASE_URL, else \`postcode login\`.
Output is text on a terminal and JSON otherwise (or with --json); errors are JSON on stderr (exit 1; usage: 2).
\`postcode <command> --help\` for one command; docs/cli.md for all of them.
`;
}

export function groupHelp(group: string, commands: Command[]): string {
  return `Usage: postcode ${group} <command> [flags]

Commands:
${commandRows(commands)}
\`postcode ${group} <command> --help\` for one command.
`;
}

export function commandHelp(command: Command, globalFlags: FlagSpec[]): string {
  const args = command.args?.length
    ? `\nArguments:\n${rows(command.args.map((a) => [`  <${a.name}>`, `${a.summary}${a.required ? '' : ' (optional)'}`]))}`
    : '';
  const flags = command.flags.length ? `\nFlags:\n${rows(flagRows(command.flags))}` : '';
  const details = command.details ? `\n${indent(command.details)}\n` : '';
  return `Usage: ${usageOf(command)}

${command.summary}
${args}${flags}
Flags of every command:
${rows(flagRows(globalFlags))}${details}`;
}
