// Where `postcode login` keeps the key, and which key and base URL a command runs with: each from its flag
// (--api-key, --base-url), else the environment (POSTCODE_API_KEY, POSTCODE_BASE_URL), else the stored file.
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { localFailure, type Settings } from './command.js';

export type Stored = { apiKey: string; baseUrl: string };
type Env = Record<string, string | undefined>;

/** `$XDG_CONFIG_HOME/postcode/credentials.json`, else `~/.config/postcode/credentials.json`. */
export function credentialsPath(env: Env): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec: a relative value is invalid and ignored.
  const config = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(config, 'postcode', 'credentials.json');
}

/** The stored key and base URL; null when there is no file. */
export function readStored(env: Env): Partial<Stored> | null {
  const path = credentialsPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw localFailure('CREDENTIALS_UNREADABLE', `${path}: ${(error as Error).message}`);
  }
  try {
    const stored = JSON.parse(text) as Partial<Stored>;
    return {
      ...(typeof stored.apiKey === 'string' ? { apiKey: stored.apiKey } : {}),
      ...(typeof stored.baseUrl === 'string' ? { baseUrl: stored.baseUrl } : {}),
    };
  } catch {
    throw localFailure('CREDENTIALS_UNREADABLE', `${path} is not JSON: run \`postcode login\` again`);
  }
}

/**
 * Stores the key readable by its owner alone: the directory 0700, the file 0600, written under another name and
 * renamed over the old one, so no moment shows a half-written or wider-readable file. Returns the path.
 */
export function writeStored(env: Env, stored: Stored): string {
  const path = credentialsPath(env);
  const dir = join(path, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // made earlier, by someone else, or under a umask
  const partial = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(partial, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    chmodSync(partial, 0o600); // the mode above is only a request, under the umask
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
  return path;
}

/** Removes the stored key; whether there was one. */
export function removeStored(env: Env): boolean {
  const path = credentialsPath(env);
  try {
    rmSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw localFailure('CREDENTIALS_UNREADABLE', `${path}: ${(error as Error).message}`);
  }
}

const given = (value: string | undefined) => (value ? value : undefined);

/** The key and base URL, each from the first place that has it; the file is read only when needed. */
export function resolveSettings(flags: { apiKey?: string; baseUrl?: string }, env: Env): Settings {
  let apiKey = given(flags.apiKey) ?? given(env.POSTCODE_API_KEY);
  let baseUrl = given(flags.baseUrl) ?? given(env.POSTCODE_BASE_URL);
  if (apiKey === undefined || baseUrl === undefined) {
    const stored = readStored(env);
    apiKey ??= given(stored?.apiKey);
    baseUrl ??= given(stored?.baseUrl);
  }
  return { ...(apiKey ? { apiKey } : {}), ...(baseUrl ? { baseUrl } : {}) };
}
