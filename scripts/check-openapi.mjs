#!/usr/bin/env node
// npm run check:openapi: lints the OpenAPI document the running service serves, and type-checks a client
// generated from it.
//
// 1. Starts its own `wrangler dev` (free port, temporary state directory, throwaway secrets; never the
//    port or state of a running `npm start`), fetches GET /api/v1/openapi.json and stops the service.
//    `--url http://127.0.0.1:8787` lints the document of a service that is already running instead.
// 2. Redocly (`redocly.yaml`: recommended rules) and Spectral (`.spectral.yaml`: spectral:oas) lint it;
//    any error fails the check, warnings are printed.
// 3. openapi-typescript generates `postcode-api.d.ts` from it, and tsc (module and moduleResolution
//    NodeNext, strict) checks, next to it, the TypeScript examples of README.md and docs/ that import
//    './postcode-api' (taken from the documents as they are now) and scripts/openapi-client-check.ts.
// Every step runs even when an earlier one failed, so one run reports everything. `--keep` keeps the
// temporary directory (the document, the generated types and the checked files) and prints its path.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bin, ENV, root, runMain, servedDocument } from './served-document.mjs';

const { values: options } = parseArgs({ options: { url: { type: 'string' }, keep: { type: 'boolean' } } });
const log = (message) => process.stdout.write(`[check:openapi] ${message}\n`);

/** Runs a command, returns { status, stdout, stderr }; never throws for a non-zero exit. */
function run(command, args, extra = {}) {
  const result = spawnSync(command, args, {
    cwd: root,
    env: ENV,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    ...extra,
  });
  if (result.error) throw result.error;
  return result;
}

/** Prints problems one a line and a count per severity and rule; returns the number of errors. */
function report(tool, problems) {
  const order = { error: 0, warning: 1, info: 2, hint: 3 };
  problems.sort((a, b) => order[a.severity] - order[b.severity] || a.rule.localeCompare(b.rule));
  for (const p of problems)
    process.stdout.write(`  ${p.severity.padEnd(7)} ${p.rule.padEnd(40)} ${p.where}\n          ${p.message}\n`);
  const counts = new Map();
  for (const p of problems) counts.set(`${p.severity} ${p.rule}`, (counts.get(`${p.severity} ${p.rule}`) ?? 0) + 1);
  if (counts.size) {
    log(`${tool} summary:`);
    for (const [key, count] of counts) process.stdout.write(`  ${String(count).padStart(4)}  ${key}\n`);
  }
  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.filter((p) => p.severity === 'warning').length;
  log(`${tool}: ${errors} error(s), ${warnings} warning(s), ${problems.length - errors - warnings} other`);
  return errors;
}

function redocly(file) {
  log('redocly lint (redocly.yaml: recommended)');
  const result = run(bin('redocly'), [
    'lint',
    file,
    '--config',
    join(root, 'redocly.yaml'),
    '--format',
    'json',
    '--max-problems',
    '100000',
    '--lint-config',
    'error',
  ]);
  let parsed;
  try {
    parsed = JSON.parse(result.stdout);
  } catch {
    process.stdout.write(result.stdout + result.stderr);
    log(`redocly lint did not print JSON (exit ${result.status})`);
    return false;
  }
  const problems = parsed.problems.map((p) => ({
    severity: p.severity === 'warn' ? 'warning' : p.severity,
    rule: p.ruleId,
    where: (p.location ?? []).map((l) => l.pointer).join(' ') || '(document)',
    message: p.message,
  }));
  const errors = report('redocly', problems);
  if (result.status !== 0 && errors === 0) process.stdout.write(result.stderr);
  return errors === 0 && result.status === 0;
}

function spectral(file) {
  log('spectral lint (.spectral.yaml: spectral:oas)');
  const result = run(bin('spectral'), [
    'lint',
    file,
    '--ruleset',
    join(root, '.spectral.yaml'),
    '--format',
    'json',
    '--fail-severity',
    'error',
    '--quiet',
  ]);
  let parsed;
  try {
    parsed = JSON.parse(result.stdout || '[]');
  } catch {
    process.stdout.write(result.stdout + result.stderr);
    log(`spectral lint did not print JSON (exit ${result.status})`);
    return false;
  }
  const severities = ['error', 'warning', 'info', 'hint'];
  const problems = parsed.map((p) => ({
    severity: severities[p.severity] ?? String(p.severity),
    rule: String(p.code),
    where: `#/${p.path.map((s) => String(s).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`,
    message: p.message,
  }));
  const errors = report('spectral', problems);
  if (result.status !== 0 && errors === 0) process.stdout.write(result.stderr);
  return errors === 0 && result.status === 0;
}

/** The documents whose examples are checked: README.md and every file of docs/. */
const exampleFiles = () => [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** The ```ts blocks of the documents that import the generated types, with the file and line each starts at. */
function docExamples() {
  const blocks = [];
  for (const file of exampleFiles()) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^```(ts|typescript)\s*$/.test(lines[i])) continue;
      const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
      if (end === -1) break;
      const code = lines.slice(i + 1, end);
      if (code.some((line) => /from\s+['"]\.\/postcode-api(\.js)?['"]/.test(line)))
        blocks.push({ file, firstLine: i + 2, code });
      i = end;
    }
  }
  return blocks;
}

function clientCheck(documentFile, dir) {
  log(
    'client: openapi-typescript, then tsc (NodeNext, strict) over the examples in README.md and docs/ and scripts/openapi-client-check.ts',
  );
  mkdirSync(dir, { recursive: true });
  const generated = run(bin('openapi-typescript'), [documentFile, '-o', join(dir, 'postcode-api.d.ts')]);
  if (generated.status !== 0) {
    process.stdout.write(generated.stdout + generated.stderr);
    log('openapi-typescript failed');
    return false;
  }
  const examples = docExamples();
  if (examples.length === 0) {
    log("neither README.md nor docs/ has a ```ts block that imports from './postcode-api'");
    return false;
  }
  const origin = new Map();
  examples.forEach(({ file, firstLine, code }, n) => {
    const name = `doc-example-${n + 1}.ts`;
    writeFileSync(join(dir, name), `${code.join('\n')}\n`);
    origin.set(name, { file, firstLine });
  });
  copyFileSync(join(root, 'scripts/openapi-client-check.ts'), join(dir, 'openapi-client-check.ts'));
  // What a reader of the examples has: an ES module package (top-level await), TypeScript with NodeNext,
  // openapi-fetch and @types/node installed (this project's node_modules).
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ private: true, type: 'module' })}\n`);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2023',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          types: ['node'],
          skipLibCheck: true,
        },
        include: ['*.ts'],
      },
      null,
      2,
    )}\n`,
  );
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const tsc = run(bin('tsc'), ['-p', 'tsconfig.json', '--pretty', 'false'], { cwd: dir });
  // Report an example's errors at its document's line: doc-example-1.ts(3,7) -> docs/architecture.md:171:7.
  const output = `${tsc.stdout}${tsc.stderr}`
    .trim()
    .replace(/^(doc-example-\d+\.ts)\((\d+),(\d+)\)/gm, (_, name, line, col) => {
      const { file, firstLine } = origin.get(name);
      return `${file}:${firstLine + Number(line) - 1}:${col}`;
    });
  const errors = output.split('\n').filter((line) => /: error TS\d+:/.test(line));
  if (errors.length) {
    process.stdout.write(`${output.replace(/^/gm, '  ')}\n`);
    const codes = new Map();
    for (const line of errors) {
      const code = line.match(/error (TS\d+)/)[1];
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    log('tsc summary:');
    for (const [code, count] of codes) process.stdout.write(`  ${String(count).padStart(4)}  ${code}\n`);
  }
  log(`tsc: ${errors.length} error(s) in ${examples.length} documented example(s) and openapi-client-check.ts`);
  return tsc.status === 0;
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'postcode-openapi-'));
  const cleanUp = () => {
    if (!options.keep) rmSync(work, { recursive: true, force: true });
  };
  try {
    const text = await servedDocument({ url: options.url, stateDir: join(work, 'state'), log });
    const file = join(work, 'openapi.json');
    writeFileSync(file, text);

    const results = {
      redocly: redocly(file),
      spectral: spectral(file),
      client: clientCheck(file, join(work, 'client')),
    };
    const failed = Object.entries(results)
      .filter(([, ok]) => !ok)
      .map(([name]) => name);
    if (options.keep) log(`kept ${work}`);
    log(
      failed.length ? `FAILED: ${failed.join(', ')}` : 'OK: both linters report no errors and the client type-checks',
    );
    return failed.length ? 1 : 0;
  } finally {
    cleanUp();
  }
}

runMain('check:openapi', main);
