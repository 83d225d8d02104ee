// `postcode …`: finds the command its words name, reads its flags, runs it and prints what it answers (text on a
// terminal, JSON otherwise) or its error (JSON on stderr). Answers the exit code: 0, 1 for a failure, 2 for a
// mistake in the command line.
import { createInterface } from 'node:readline/promises';
import { Postcode } from '../index.js';
import { parseArgs } from './args.js';
import { CliFailure, type Command, type Context, localFailure, type Settings, usageError, usageOf } from './command.js';
import { resolveSettings } from './credentials.js';
import { commandHelp, groupHelp, rootHelp } from './help.js';
import { errorLine, type Io, json, modeOf } from './output.js';
import { commands, GLOBAL_FLAGS } from './registry.js';

/** What main reads and writes besides argv: the process's, or a test's. */
export type Runtime = {
  io: Io;
  env: Record<string, string | undefined>;
  prompt?: (question: string) => Promise<string>;
};

function processRuntime(): Runtime {
  // A reader that stops early (`| head`) closes the pipe: the rest is not wanted, which is no failure.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  return {
    io: {
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
      isTTY: process.stdout.isTTY === true,
    },
    env: process.env,
    ...(process.stdin.isTTY
      ? {
          prompt: async (question: string) => {
            // Asked on stderr: stdout stays the command's answer.
            const lines = createInterface({ input: process.stdin, output: process.stderr });
            try {
              return (await lines.question(question)).trim();
            } finally {
              lines.close();
            }
          },
        }
      : {}),
  };
}

const GLOBAL_WITH_VALUE = new Set(GLOBAL_FLAGS.filter((f) => f.type !== 'boolean').map((f) => `--${f.name}`));

/** The command words at the front of argv (global flags may come between them) and the tokens left. */
function split(argv: string[]): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') break;
    if (token.startsWith('-')) {
      rest.push(token);
      if (GLOBAL_WITH_VALUE.has(token) && i + 1 < argv.length) rest.push(argv[++i]!);
      continue;
    }
    const candidate = [...words, token];
    if (!commands.some((c) => candidate.every((word, n) => c.path[n] === word))) break;
    words.push(token);
  }
  return { words, rest: [...rest, ...argv.slice(i)] };
}

const wantsHelp = (tokens: string[]) => {
  const end = tokens.indexOf('--');
  return (end === -1 ? tokens : tokens.slice(0, end)).some((t) => t === '--help' || t === '-h' || t === '--help=true');
};

function context(command: Command, tokens: string[], runtime: Runtime): Context {
  const { flags, args } = parseArgs(tokens, [...command.flags, ...GLOBAL_FLAGS], command.args, usageOf(command));
  let settings: Settings | undefined;
  const read = () => {
    settings ??= resolveSettings({ apiKey: flags.string('api-key'), baseUrl: flags.string('base-url') }, runtime.env);
    return settings;
  };
  return {
    args,
    flags,
    env: runtime.env,
    io: runtime.io,
    settings: read,
    client: () => {
      const { apiKey, baseUrl } = read();
      if (!apiKey) {
        throw localFailure('NO_API_KEY', 'No API key: run `postcode login`, set POSTCODE_API_KEY or pass --api-key');
      }
      if (!baseUrl) {
        throw localFailure(
          'NO_BASE_URL',
          'No base URL (where postcode runs): run `postcode login`, set POSTCODE_BASE_URL or pass --base-url',
        );
      }
      return new Postcode(apiKey, { baseUrl });
    },
    ...(runtime.prompt ? { prompt: runtime.prompt } : {}),
  };
}

async function dispatch(argv: string[], runtime: Runtime): Promise<number> {
  const { io } = runtime;
  const { words, rest } = split(argv);
  const command = commands.find((c) => c.path.length === words.length && c.path.every((w, n) => words[n] === w));
  if (!command) {
    const group = commands.filter((c) => words.every((word, n) => c.path[n] === word));
    if (words.length === 0 && (argv.length === 0 || wantsHelp(rest))) {
      io.out(rootHelp(commands, GLOBAL_FLAGS));
      return 0;
    }
    if (words.length > 0 && wantsHelp(rest)) {
      io.out(groupHelp(words.join(' '), group));
      return 0;
    }
    const next = rest.find((t) => !t.startsWith('-'));
    if (words.length === 0) {
      throw usageError(next ? `unknown command ${JSON.stringify(next)}` : 'no command given', 'postcode --help');
    }
    const choices = [...new Set(group.map((c) => c.path[words.length]))].join(', ');
    const problem = next
      ? `unknown command "${[...words, next].join(' ')}"`
      : `postcode ${words.join(' ')} needs a command`;
    throw usageError(`${problem} (one of: ${choices})`, `postcode ${words.join(' ')} --help`);
  }
  if (wantsHelp(rest)) {
    io.out(commandHelp(command, GLOBAL_FLAGS));
    return 0;
  }
  const ctx = context(command, rest, runtime);
  const printed = await command.run(ctx);
  if (printed.data === undefined) return 0; // a stream (webhooks listen) printed as it went
  const mode = modeOf(ctx.flags.boolean('json'), io.isTTY);
  io.out(mode === 'human' && printed.human ? printed.human() : json(printed.data));
  return 0;
}

/** Runs `postcode …argv`; the exit code. */
export async function main(argv: string[], runtime: Runtime = processRuntime()): Promise<number> {
  try {
    return await dispatch(argv, runtime);
  } catch (error) {
    const failure =
      error instanceof CliFailure
        ? error
        : localFailure('CLI_ERROR', error instanceof Error ? error.message : String(error));
    runtime.io.err(errorLine(failure.body));
    return failure.exitCode;
  }
}
