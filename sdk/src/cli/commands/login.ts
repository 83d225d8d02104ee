// `postcode login` checks a key against the service and stores it with its base URL for later commands;
// `postcode logout` removes it.
import { Postcode } from '../../index.js';
import { type Command, type Context, dataOf, usageError } from '../command.js';
import { credentialsPath, readStored, removeStored, writeStored } from '../credentials.js';

/** The flag, else the environment, else (for the base URL) the stored one, else asked on the terminal. */
async function ask(ctx: Context, what: string, given: string | undefined, question: string): Promise<string> {
  if (given) return given;
  if (!ctx.prompt) throw usageError(`${what} is required when stdin is not a terminal`, 'postcode login --help');
  const answer = await ctx.prompt(question);
  if (!answer) throw usageError(`no ${what} given`, 'postcode login --help');
  return answer;
}

function checkedBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`--base-url: not a URL: ${JSON.stringify(text)}`, 'postcode login --help');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw usageError(`--base-url: expected http(s), not ${url.protocol}`, 'postcode login --help');
  }
  return text.replace(/\/+$/, '');
}

const login: Command = {
  path: ['login'],
  summary: 'Checks an API key against the service and stores it for later commands',
  flags: [],
  details: `Takes --api-key and --base-url (else POSTCODE_API_KEY and POSTCODE_BASE_URL; asks on a terminal when
missing). The key is checked with a read any API key may make, then stored with the base URL in
$XDG_CONFIG_HOME/postcode/credentials.json (else ~/.config/postcode/credentials.json), readable by you alone.

  postcode login --base-url http://127.0.0.1:8787 --api-key pc_key_...`,
  async run(ctx) {
    const stored = (() => {
      try {
        return readStored(ctx.env);
      } catch {
        return null; // an unreadable file is replaced
      }
    })();
    const apiKey = await ask(ctx, '--api-key', ctx.flags.string('api-key') || ctx.env.POSTCODE_API_KEY, 'API key: ');
    const baseUrl = checkedBaseUrl(
      await ask(
        ctx,
        '--base-url',
        ctx.flags.string('base-url') || ctx.env.POSTCODE_BASE_URL || stored?.baseUrl,
        'Base URL (where postcode runs, e.g. http://127.0.0.1:8787): ',
      ),
    );
    // Any API key may list its account's webhooks: a wrong key is 401, a public OTP token 403, and nothing changes.
    dataOf(await new Postcode(apiKey, { baseUrl }).webhooks.list());
    const path = writeStored(ctx.env, { apiKey, baseUrl });
    return {
      data: { baseUrl, credentialsFile: path },
      human: () => `Logged in to ${baseUrl}. The key is stored in ${path}.\n`,
    };
  },
};

const logout: Command = {
  path: ['logout'],
  summary: 'Removes the key `postcode login` stored',
  flags: [],
  async run(ctx) {
    const path = credentialsPath(ctx.env);
    const removed = removeStored(ctx.env);
    return {
      data: { removed, credentialsFile: path },
      human: () => (removed ? `Removed ${path}.\n` : `No stored key (${path}).\n`),
    };
  },
};

export const loginCommands: Command[] = [login, logout];
