// A long-running CLI (`postcode webhooks listen`) as the tests run it: stdout is a pipe, so the CLI writes one JSON
// object per line; the test reads them as they arrive, and the exit code and stderr once it stops.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The objects the child has written so far (the array fills as lines arrive). */
function jsonLines(child: ChildProcessWithoutNullStreams): Record<string, unknown>[] {
  const seen: Record<string, unknown>[] = [];
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let at = buffer.indexOf('\n'); at !== -1; at = buffer.indexOf('\n')) {
      const line = buffer.slice(0, at).trim();
      buffer = buffer.slice(at + 1);
      if (line) seen.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  return seen;
}

/** The built CLI (sdk/dist/cli.js) with `args`, the key and base URL in its environment, run by `node`. */
export function runCli(args: string[], settings: { baseUrl: string; apiKey: string; node?: string }) {
  const cli = spawn(settings.node ?? process.execPath, [join(root, 'sdk/dist/cli.js'), ...args], {
    cwd: root,
    env: { ...process.env, POSTCODE_BASE_URL: settings.baseUrl, POSTCODE_API_KEY: settings.apiKey },
  });
  let stderr = '';
  cli.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const exited = new Promise<number | null>((r) => cli.on('exit', (code) => r(code)));
  return { cli, out: jsonLines(cli), exited, stderr: () => stderr };
}
