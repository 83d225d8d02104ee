// The CLI's command-line reading (sdk/src/cli/args.ts) and its output formats (output.ts, help.ts): flags in both
// spellings, repeatable and boolean ones, and anything unknown or incomplete as a usage error (exit 2); tables,
// label lines, the choice of text or JSON, and the help made from the commands.
import { describe, expect, it } from 'vitest';
import { keyValue, parseArgs } from '../../sdk/src/cli/args';
import { CliFailure, type Command, type FlagSpec } from '../../sdk/src/cli/command';
import { commandHelp, groupHelp, rootHelp } from '../../sdk/src/cli/help';
import { errorLine, fields, modeOf, pageText, table } from '../../sdk/src/cli/output';

const FLAGS: FlagSpec[] = [
  { name: 'to', type: 'list', summary: 'A recipient' },
  { name: 'subject', type: 'string', summary: 'The subject' },
  { name: 'limit', type: 'string', summary: 'Items per page' },
  { name: 'dry-run', type: 'boolean', summary: 'Sends nothing' },
  { name: 'email', type: 'string', summary: 'An address', required: true },
  { name: 'help', type: 'boolean', summary: 'Help' },
];
const parse = (...tokens: string[]) => parseArgs(tokens, FLAGS, [{ name: 'id', summary: 'An id' }], 'postcode x');

/** The usage error `run` throws: its message and exit code. */
function usage(run: () => unknown) {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliFailure);
    const failure = error as CliFailure;
    return {
      message: failure.body.message,
      code: failure.body.code,
      exit: failure.exitCode,
      usage: failure.body.usage,
    };
  }
  throw new Error('no usage error');
}

describe('parseArgs', () => {
  it('reads --flag value and --flag=value, repeatable flags in order, booleans and the positional', () => {
    const { flags, args } = parse(
      'em_1',
      '--to',
      'a@example.com',
      '--to=b@example.com',
      '--subject=x=y',
      '--email',
      'e',
    );
    expect(flags.list('to')).toEqual(['a@example.com', 'b@example.com']);
    expect(flags.string('subject')).toBe('x=y');
    expect(flags.boolean('dry-run')).toBe(false);
    expect(args).toEqual({ id: 'em_1' });
    expect(parse('--email=e', '--dry-run').flags.boolean('dry-run')).toBe(true);
    expect(parse('--email=e', '--dry-run', '--dry-run=false').flags.boolean('dry-run')).toBe(false);
    expect(parse('--email=e', '--subject=--starts-with-dashes').flags.string('subject')).toBe('--starts-with-dashes');
    expect(parse('--email=e', '--subject', '-1').flags.string('subject')).toBe('-1');
    expect(parse('--email=e', '--', '--not-a-flag').args.id).toBe('--not-a-flag');
    expect(parse('--email=e', '--limit', '25').flags.integer('limit')).toBe(25);
  });

  it('refuses unknown flags, missing values, repeats of a single flag, extra and missing arguments (exit 2)', () => {
    expect(usage(() => parse('--email=e', '--nope'))).toEqual({
      message: 'unknown flag --nope',
      code: 'USAGE',
      exit: 2,
      usage: 'postcode x',
    });
    expect(usage(() => parse('--email=e', '-x')).message).toBe('unknown flag -x');
    expect(usage(() => parse('--email=e', '--subject')).message).toBe('--subject needs a value');
    expect(usage(() => parse('--email=e', '--subject', '--dry-run')).message).toBe('--subject needs a value');
    expect(usage(() => parse('--email=e', '--subject=a', '--subject=b')).message).toBe(
      '--subject given more than once',
    );
    expect(usage(() => parse('--email=e', '--dry-run=yes')).message).toBe(
      '--dry-run takes no value (or =true, =false)',
    );
    expect(usage(() => parse('--email=e', 'one', 'two')).message).toBe('unexpected argument "two"');
    expect(usage(() => parse('--to', 'a@example.com')).message).toBe('--email is required');
    expect(usage(() => parse('--email=e', '--limit=ten').flags.integer('limit')).message).toBe(
      '--limit takes a whole number, not "ten"',
    );
    const required = () => parseArgs([], [], [{ name: 'id', summary: 'An id', required: true }]);
    expect(usage(required).message).toBe('missing <id>');
  });

  it('lets --help through whatever else is missing', () => {
    expect(parse('--help').flags.boolean('help')).toBe(true);
    expect(parse('-h').flags.boolean('help')).toBe(true);
  });

  it('splits name=value at the first =', () => {
    expect(keyValue('tag', 'category=a=b')).toEqual(['category', 'a=b']);
    expect(usage(() => keyValue('tag', 'category')).message).toBe('--tag takes name=value, not "category"');
    expect(usage(() => keyValue('tag', '=value')).exit).toBe(2);
  });
});

describe('output', () => {
  it('is text on a terminal without --json, JSON otherwise', () => {
    expect(modeOf(false, true)).toBe('human');
    expect(modeOf(true, true)).toBe('json');
    expect(modeOf(false, false)).toBe('json');
  });

  it('pads table columns to the widest cell and keeps each row on one line', () => {
    expect(
      table(
        ['ID', 'STATUS', 'SUBJECT'],
        [
          ['em_1', 'SENT', 'Hi\nthere'],
          ['em_22', 'QUEUED', null],
        ],
      ),
    ).toBe('ID     STATUS  SUBJECT\nem_1   SENT    Hi there\nem_22  QUEUED\n');
    expect(table(['ID'], [])).toBe('(none)\n');
    expect(
      fields([
        ['id', 'em_1'],
        ['status', 'SENT'],
        ['sent', undefined],
      ]),
    ).toBe('id:     em_1\nstatus: SENT\n');
    expect(pageText('rows\n', { total: 30, nextCursor: 'c1' }, 20)).toBe(
      'rows\n20 of 30 shown; the next page: --after c1 (or --all)\n',
    );
  });

  it('writes an error as one line of JSON', () => {
    const error = { code: 'UNAUTHORIZED', message: 'Invalid API key', status: 401, requestId: 'req_1' };
    expect(JSON.parse(errorLine(error))).toEqual({ error });
    expect(errorLine(error).endsWith('}\n')).toBe(true);
    expect(errorLine(error).split('\n')).toHaveLength(2);
  });
});

describe('help', () => {
  const command: Command = {
    path: ['emails', 'get'],
    summary: 'Shows one email',
    args: [{ name: 'id', summary: 'The email id', required: true }],
    flags: [FLAGS[0]!, FLAGS[3]!],
    details: 'postcode emails get em_1',
    run: async () => ({ data: null }),
  };
  const globals: FlagSpec[] = [{ name: 'json', type: 'boolean', summary: 'JSON' }];

  it('lists the commands, a group, and one command with its arguments and flags', () => {
    expect(rootHelp([command], globals)).toContain('  emails get  Shows one email\n');
    expect(groupHelp('emails', [command])).toContain('Usage: postcode emails <command> [flags]');
    const help = commandHelp(command, globals);
    expect(help).toContain('Usage: postcode emails get <id> [flags]');
    expect(help).toContain('  <id>  The email id\n');
    expect(help).toMatch(/--to VALUE …\s+A recipient \(repeatable\)/);
    expect(help).toMatch(/--dry-run\s+Sends nothing/);
    expect(help).toContain('  postcode emails get em_1');
  });
});
