// The command tree of `postcode`: every command main.ts can run, in the order the help lists them, and the flags
// every command takes.
import { type Command, type FlagSpec, usageOf } from './command.js';
import { domainCommands } from './commands/domains.js';
import { emailCommands } from './commands/emails.js';
import { loginCommands } from './commands/login.js';
import { otpCommands } from './commands/otp.js';
import { suppressionCommands } from './commands/suppressions.js';
import { templateCommands } from './commands/templates.js';
import { webhookCommands } from './commands/webhooks.js';
import { table } from './output.js';

export const GLOBAL_FLAGS: FlagSpec[] = [
  { name: 'api-key', type: 'string', value: 'KEY', summary: 'The API key (else POSTCODE_API_KEY, else the login)' },
  {
    name: 'base-url',
    type: 'string',
    value: 'URL',
    summary: 'Where postcode runs (else POSTCODE_BASE_URL, else the login)',
  },
  { name: 'json', type: 'boolean', summary: 'JSON on stdout even on a terminal' },
  { name: 'help', type: 'boolean', summary: 'This help (also -h)' },
];

/** `postcode commands`: the tree itself, for scripts and completions. */
const commandsCommand: Command = {
  path: ['commands'],
  summary: 'Lists every command with its arguments and flags (JSON: the whole tree)',
  flags: [],
  async run() {
    const tree = commands.map((command) => ({
      path: command.path,
      summary: command.summary,
      usage: usageOf(command),
      args: command.args ?? [],
      flags: command.flags,
    }));
    return {
      data: { commands: tree, globalFlags: GLOBAL_FLAGS },
      human: () =>
        table(
          ['COMMAND', 'SUMMARY'],
          tree.map((c) => [c.path.join(' '), c.summary]),
        ),
    };
  },
};

export const commands: Command[] = [
  ...loginCommands,
  ...emailCommands,
  ...templateCommands,
  ...domainCommands,
  ...otpCommands,
  ...suppressionCommands,
  ...webhookCommands,
  commandsCommand,
];
