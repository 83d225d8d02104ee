// `postcode`, the command line (sdk/bin/postcode.js runs this built file): see docs/cli.md.
import { spawn } from 'node:child_process';
import { main } from './cli/main.js';

const argv = process.argv.slice(2);
const FLAG = '--experimental-websocket';

/** Node 20 has WebSocket only behind a flag, and `webhooks listen` holds one: it runs again with the flag. */
const needsFlag = typeof WebSocket === 'undefined' && !process.execArgv.includes(FLAG) && argv.includes('listen');

if (needsFlag) {
  const child = spawn(process.execPath, [...process.execArgv, FLAG, process.argv[1]!, ...argv], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  process.exitCode = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
} else {
  process.exitCode = await main(argv);
}
