// sdk/README.md's examples, each run as written: a TypeScript block is compiled to JavaScript as is
// (only types removed) and run by Node in a directory where `postcode` is this workspace's build, against the e2e
// service. Its placeholders are bound: POSTCODE_API_KEY and WEBHOOK_SECRET in the environment, the example hosts and
// token replaced by the service's, and the names a fragment takes from its surroundings (`pc`, `rawBody`, `request`)
// set by a prelude from a real account and a real signed delivery. A block must exit 0, print nothing to stderr and
// have every API call answered 2xx; a shell block's `npx postcode` lines run as a reader types them. A block in
// another language fails, so a new example cannot go unrun.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Postcode } from 'postcode';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, type Delivery, ownAccount, type Receiver, service, startReceiver } from './sdk-support';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = join(root, 'sdk/README.md');

type Block = { lang: string; line: number; source: string };

/** The fenced blocks of a Markdown text, indented ones (inside a list item) included, dedented. */
function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const end = lines.findIndex((text, j) => j > i && new RegExp(`^ {${indent}}\`\`\`\\s*$`).test(text));
    if (end === -1) throw new Error(`sdk/README.md:${i + 1}: a fence that is never closed`);
    const body = lines.slice(i + 1, end).map((text) => text.slice(indent));
    blocks.push({ lang: open[2]!, line: i + 1, source: `${body.join('\n')}\n` });
    i = end;
  }
  return blocks;
}

const blocks = fencedBlocks(readFileSync(README, 'utf8'));

let account: Account;
let receiver: Receiver;
let webhookSecret: string;
/** A SENT email of the account (for the list example to print) and its signed `email.sent` delivery. */
let sentId: string;
let delivery: Delivery;
const dir = mkdtempSync(join(tmpdir(), 'postcode-sdk-readme-'));

beforeAll(async () => {
  account = await ownAccount('sdk readme');
  receiver = await startReceiver();
  const pc = new Postcode(account.mailKey, { baseUrl: service.baseUrl });
  const hook = await pc.webhooks.create({ url: receiver.url, events: ['email.sent'] });
  webhookSecret = hook.data!.secret!;
  const sent = await pc.emails.send({ to: 'grace@example.com', subject: 'For the README', text: 'x' });
  sentId = sent.data!.id;
  delivery = await receiver.next((d) => d.type === 'email.sent' && d.data.emailId === sentId);
  // What `npm install postcode` gives a reader's directory (node_modules/postcode is the workspace's sdk/).
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
});
afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The README's placeholders, as written there, and what each stands for here. */
const placeholders = () => ({
  "'http://127.0.0.1:8787'": JSON.stringify(service.baseUrl),
  "'https://postcode.example'": JSON.stringify(service.baseUrl),
  "'pc_otp_...'": JSON.stringify(account.publicToken),
});

/**
 * Runs first: the names a fragment takes from its surroundings, and a `fetch` that records every call's answer
 * (written to calls.json on exit), so that a block whose call failed without throwing still fails here.
 */
const PRELUDE = `import { writeFileSync } from 'node:fs';
import { Postcode } from 'postcode';

const given = JSON.parse(process.env.README_GIVEN);
const calls = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const res = await realFetch(input, init);
  calls.push({ method: init?.method ?? 'GET', url: String(input), status: res.status });
  return res;
};
process.on('exit', () => writeFileSync(new URL('./calls.json', import.meta.url), JSON.stringify(calls)));

globalThis.pc = new Postcode(process.env.POSTCODE_API_KEY, { baseUrl: given.baseUrl });
globalThis.rawBody = given.delivery.rawBody;
globalThis.request = new Request(given.receiverUrl, {
  method: 'POST',
  headers: given.delivery.headers,
  body: given.delivery.rawBody,
});
`;

type Call = { method: string; url: string; status: number };

/** The block as JavaScript (types removed, nothing else changed), placeholders bound, after the prelude. */
function program(block: Block): string {
  let source = block.source;
  for (const [written, bound] of Object.entries(placeholders())) source = source.replaceAll(written, bound);
  const js = ts.transpileModule(source, {
    fileName: `readme-${block.line}.ts`,
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  if (js.diagnostics?.length) throw new Error(ts.formatDiagnostics(js.diagnostics, ts.createCompilerHost({})));
  return `import './prelude.mjs';\n${js.outputText}`;
}

function run(block: Block) {
  writeFileSync(join(dir, 'prelude.mjs'), PRELUDE);
  writeFileSync(join(dir, 'example.mjs'), program(block));
  rmSync(join(dir, 'calls.json'), { force: true });
  const given = { baseUrl: service.baseUrl, receiverUrl: receiver.url, delivery };
  const result = spawnSync(process.execPath, ['example.mjs'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 30_000,
    env: {
      PATH: process.env.PATH ?? '',
      POSTCODE_API_KEY: account.mailKey,
      WEBHOOK_SECRET: webhookSecret,
      README_GIVEN: JSON.stringify(given),
    },
  });
  let calls: Call[] = [];
  try {
    calls = JSON.parse(readFileSync(join(dir, 'calls.json'), 'utf8')) as Call[];
  } catch {} // the prelude never ran: the exit status and stderr say why
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, calls };
}

/** What some blocks must also show, by what they contain (a block matching none gets the general checks). */
const particular: { when: RegExp; check: (out: ReturnType<typeof run>) => void }[] = [
  {
    when: /pc\.emails\.send\(/,
    check: ({ stdout, calls }) => {
      expect(stdout).toMatch(/^em_\w+ QUEUED\n$/);
      expect(calls.map((c) => `${c.method} ${new URL(c.url).pathname}`)).toEqual(['POST /api/v1/emails']);
    },
  },
  {
    when: /for await \(const email of pc\.emails\.list/,
    check: ({ stdout }) => expect(stdout.split('\n')).toContain(sentId),
  },
  {
    when: /verifyWebhook\(/,
    check: ({ stdout, calls }) => {
      expect(stdout).toContain(`emailId: '${sentId}'`); // the verified event's data, printed
      expect(calls).toEqual([]);
    },
  },
  {
    when: /createOtpClient\(/,
    check: ({ calls }) =>
      expect(calls.map((c) => `${c.method} ${new URL(c.url).pathname} ${c.status}`)).toEqual([
        'POST /api/v1/instant-otp/send 200',
      ]),
  },
];

/** A shell line's words: plain, or in double quotes (all the README's command lines use). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

/**
 * A shell block: each line is `npx postcode …`, run as written in the reader's directory (where `npx` finds the
 * package's bin) with its own config folder, so the `login` of its first line is what the next lines use.
 */
function runShell(block: Block) {
  const config = mkdtempSync(join(tmpdir(), 'postcode-readme-config-'));
  try {
    return block.source
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('#'))
      .map((line) => {
        const bound = line
          .replaceAll('http://127.0.0.1:8787', service.baseUrl)
          .replaceAll('pc_key_...', account.mailKey);
        const [command, ...args] = words(bound);
        expect(command, `line "${line}" is an npx postcode command`).toBe('npx');
        expect(args[0]).toBe('postcode');
        const result = spawnSync('npx', args, {
          cwd: dir,
          encoding: 'utf8',
          timeout: 30_000,
          env: { PATH: process.env.PATH ?? '', HOME: config, XDG_CONFIG_HOME: config },
        });
        return { line, status: result.status, stdout: result.stdout, stderr: result.stderr };
      });
  } finally {
    rmSync(config, { recursive: true, force: true });
  }
}

describe('sdk/README.md', () => {
  it('has only TypeScript and shell blocks, each run below (a block in another language needs a runner here)', () => {
    const fences = readFileSync(README, 'utf8').match(/^ *```/gm) ?? [];
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.length * 2, 'every fence opens or closes a block found').toBe(fences.length);
    const unrun = blocks.filter((b) => b.lang !== 'ts' && b.lang !== 'sh');
    expect(unrun.map((b) => `line ${b.line}: ${b.lang || '(none)'}`)).toEqual([]);
  });

  for (const block of blocks.filter((b) => b.lang === 'sh')) {
    it(`the command lines at line ${block.line} run against the service`, () => {
      for (const out of runShell(block)) {
        expect(out.status, `${out.line}\n${out.stderr}`).toBe(0);
        expect(out.stderr, out.line).toBe('');
        // stdout is a pipe: JSON, the answer's data
        const data = JSON.parse(out.stdout) as { id?: string; baseUrl?: string };
        if (/ emails send /.test(out.line)) expect(data.id).toMatch(/^em_/);
        if (/ login /.test(out.line)) expect(data.baseUrl).toBe(service.baseUrl);
      }
    });
  }

  // The list example prints the account's SENT emails: one must be SENT before it runs.
  beforeAll(async () => {
    const pc = new Postcode(account.mailKey, { baseUrl: service.baseUrl });
    const sent = async () => expect((await pc.emails.get(sentId)).data?.status).toBe('SENT');
    await vi.waitFor(sent, { timeout: 30_000, interval: 200 });
  });

  for (const block of blocks.filter((b) => b.lang === 'ts')) {
    it(`the example at line ${block.line} runs against the service, every call answered 2xx`, () => {
      const out = run(block);
      expect(out.status, `${out.stderr}\n--- as run:\n${program(block)}`).toBe(0);
      expect(out.stderr).toBe('');
      for (const call of out.calls) expect(call.status, `${call.method} ${call.url}`).toBeLessThan(300);
      for (const { when, check } of particular) if (when.test(block.source)) check(out);
    });
  }
});
