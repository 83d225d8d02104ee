// The `postcode` command line (sdk/src/cli, built into sdk/dist by `npm ci`) as a person or a script runs it, as a
// process against the service as `npm start` runs it, with a home of its own: login and where keys come from,
// sends by flags and by file that go out, dry runs that send nothing, lists, templates as a folder, domains, codes
// read from the inbox, suppressions, the command tree; and the text it shows on a terminal.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../sdk/src/cli/main';
import { codeFromInbox, uniqueEmail, wrongCodeFor } from './browser';
import { service, succeeded } from './shared-service';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(root, 'sdk/dist/cli.js');
const BIN = join(root, 'node_modules/.bin/postcode');
const SENDER = 'cli@cli-sender.example';

let home: string;
/** An account of this file's own (the demo account's audit log and send log are other tests'), with a live key. */
let account: { id: string; key: string };

type Run = { code: number | null; stdout: string; stderr: string };

/** `postcode …args` as a process, in this file's home, with no POSTCODE_* but those given. */
function postcode(args: string[], env: Record<string, string> = {}, input?: string, command = [CLI]): Run {
  const base = { ...process.env };
  delete base.POSTCODE_API_KEY;
  delete base.POSTCODE_BASE_URL;
  const [file, ...prefix] = command.length === 1 && command[0] === CLI ? [process.execPath, CLI] : command;
  const run = spawnSync(file!, [...prefix, ...args], {
    cwd: root,
    encoding: 'utf8',
    input,
    env: { ...base, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), ...env },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The key and base URL of this file's account, from the environment. */
const asAccount = () => ({ POSTCODE_API_KEY: account.key, POSTCODE_BASE_URL: service.baseUrl });

/** A run that must succeed: its JSON. */
function ok<T>(args: string[], env: Record<string, string> = asAccount(), input?: string): T {
  const run = postcode(args, env, input);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as T;
}

/** A run that must fail with this exit code: its error, with nothing on stdout. */
function failed(args: string[], exit: number, env: Record<string, string> = asAccount()) {
  const run = postcode(args, env);
  expect(run.code, run.stdout + run.stderr).toBe(exit);
  expect(run.stdout).toBe('');
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return (JSON.parse(lines[0]!) as { error: { code: string; message: string; status: number | null } }).error;
}

const statusOf = async (id: string) =>
  (await succeeded<{ status: string }>('GET', `/api/v1/emails/${id}`, account.key)).status;

type Page = { emails: { id: string; status: string; subject: string }[]; total: number; nextCursor: string | null };

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: npm run build:sdk`);
  home = mkdtempSync(join(tmpdir(), 'postcode-cli-'));
  const admin = <T>(path: string, body: unknown) => succeeded<T>('POST', path, service.adminToken, body);
  const { id } = await admin<{ id: string }>('/admin/v1/accounts', { name: 'postcode CLI' });
  const { key } = await admin<{ key: string }>(`/admin/v1/accounts/${id}/api-keys`, { scopes: ['mail_api'] });
  await admin(`/admin/v1/accounts/${id}/senders`, { email: SENDER, name: 'CLI' });
  account = { id, key };
});

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('postcode login and where the key comes from', () => {
  it('stores the key 0600 in a 0700 folder; later commands use it, the environment wins over it, a flag over both', () => {
    const login = ok<{ baseUrl: string; credentialsFile: string }>(
      ['login', '--api-key', account.key, '--base-url', `${service.baseUrl}/`],
      {},
    );
    const file = join(home, 'config/postcode/credentials.json');
    expect(login).toEqual({ baseUrl: service.baseUrl, credentialsFile: file });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ apiKey: account.key, baseUrl: service.baseUrl });

    expect(ok<Page>(['emails', 'list', '--limit', '1'], {}).total).toEqual(expect.any(Number));
    const wrong = { POSTCODE_API_KEY: 'pc_key_not_a_real_key' };
    expect(failed(['emails', 'list'], 1, wrong)).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(ok<Page>(['emails', 'list', '--api-key', account.key], wrong).emails).toEqual(expect.any(Array));

    // A key the service refuses is not stored.
    const refused = failed(['login', '--api-key', 'pc_key_not_a_real_key', '--base-url', service.baseUrl], 1, {});
    expect(refused.code).toBe('UNAUTHORIZED');
    expect(JSON.parse(readFileSync(file, 'utf8')).apiKey).toBe(account.key);

    expect(ok(['logout'], {})).toEqual({ removed: true, credentialsFile: file });
    expect(existsSync(file)).toBe(false);
    expect(failed(['emails', 'list'], 1, {})).toMatchObject({ code: 'NO_API_KEY', status: null });
  });

  it('keeps the file under ~/.config without XDG_CONFIG_HOME; login needs --api-key when stdin is no terminal', () => {
    const env = { XDG_CONFIG_HOME: '', POSTCODE_BASE_URL: service.baseUrl };
    const login = ok<{ credentialsFile: string }>(['login', '--api-key', account.key], env);
    expect(login.credentialsFile).toBe(join(home, '.config/postcode/credentials.json'));
    expect(statSync(login.credentialsFile).mode & 0o777).toBe(0o600);
    rmSync(login.credentialsFile);
    expect(failed(['login'], 2, env)).toMatchObject({ code: 'USAGE', message: expect.stringContaining('--api-key') });
  });
});

describe('postcode emails', () => {
  it('sends by flags and by a JSON file (flags over it); both go out', async () => {
    const to = uniqueEmail('cli-flags');
    const flags = [
      ['--from', `CLI <${SENDER}>`, '--to', to, '--cc', uniqueEmail('cli-cc'), '--subject', 'From the CLI'],
      ['--text', 'Hello from flags', '--tag', 'category=cli', '--idempotency-key', `cli-${randomUUID()}`],
    ].flat();
    const first = ok<{ id: string; status: string }>(['emails', 'send', ...flags]);
    expect(first).toEqual({ id: expect.stringMatching(/^em_/), status: 'QUEUED' });
    // The same key sends once: the second run gets the first answer.
    expect(ok<{ id: string }>(['emails', 'send', ...flags]).id).toBe(first.id);

    const file = join(home, 'body.json');
    const body = { to: uniqueEmail('cli-file'), subject: 'From the file', html: '<p>Hello from a file</p>' };
    writeFileSync(file, JSON.stringify(body));
    const fromFile = ok<{ id: string }>(['emails', 'send', '--file', file, '--subject', 'Flag over file']);
    const fromStdin = ok<{ id: string }>(['emails', 'send', '--file', '-'], asAccount(), JSON.stringify(body));

    for (const { id } of [first, fromFile, fromStdin]) {
      await expect.poll(() => statusOf(id), { timeout: 30_000 }).toBe('SENT');
    }
    const detail = ok<{ id: string; subject: string; from: string; tags: unknown[]; status: string }>([
      'emails',
      'get',
      fromFile.id,
    ]);
    expect(detail).toMatchObject({ id: fromFile.id, subject: 'Flag over file', status: 'SENT' });
    expect(ok<{ from: string; tags: unknown[] }>(['emails', 'get', first.id])).toMatchObject({
      from: SENDER,
      tags: [{ name: 'category', value: 'cli' }],
    });
  });

  it('--dry-run checks the body and sends nothing; a body the document refuses is exit 1 with its problems', () => {
    const before = ok<Page>(['emails', 'list', '--limit', '1']).total;
    const to = uniqueEmail('cli-dry');
    const request = ok<{ method: string; url: string; headers: Record<string, string>; body: unknown }>([
      ...['emails', 'send', '--to', to, '--subject', 'Dry', '--text', 'Not sent', '--tag', 'run=dry', '--dry-run'],
    ]);
    expect(request).toEqual({
      method: 'POST',
      url: `${service.baseUrl}/api/v1/emails`,
      headers: {
        Authorization: 'Bearer [redacted]',
        'Content-Type': 'application/json',
        'Idempotency-Key': '(generated when sent)',
      },
      body: { to, subject: 'Dry', text: 'Not sent', tags: [{ name: 'run', value: 'dry' }] },
    });
    expect(JSON.stringify(request)).not.toContain(account.key);

    // Flags over a file: a flag replaces its field (a list as a whole); --var sets one key of vars.
    const base = join(home, 'base.json');
    const fileBody = { to: ['a@example.com', 'b@example.com'], subject: 'S', text: 'T', vars: { a: '1', b: '2' } };
    writeFileSync(base, JSON.stringify(fileBody));
    const merged = ok<{ body: unknown }>(['emails', 'send', '--file', base, '--to', to, '--var', 'b=3', '--dry-run']);
    expect(merged.body).toEqual({ to, subject: 'S', text: 'T', vars: { a: '1', b: '3' } });

    const pattern = failed(
      ['emails', 'send', '--to', 'not-an-address', '--subject', 'S', '--text', 'T', '--dry-run'],
      1,
    );
    expect(pattern).toMatchObject({
      code: 'INVALID_INPUT',
      status: null,
      details: [{ path: 'to', message: 'expected an email address' }],
    });
    const file = join(home, 'no-subject.json');
    writeFileSync(file, JSON.stringify({ to, text: 'no subject', tags: [{ name: 'a b', value: 'c' }] }));
    expect(failed(['emails', 'send', '--file', file, '--dry-run'], 1)).toMatchObject({
      code: 'INVALID_INPUT',
      details: [
        { path: 'subject', message: 'is required' },
        { path: 'tags[0].name', message: 'must match ^[A-Za-z0-9_-]{1,256}$' },
      ],
    });
    expect(failed(['emails', 'send', '--to', to, '--bogus', '--dry-run'], 2)).toMatchObject({ code: 'USAGE' });
    expect(ok<Page>(['emails', 'list', '--limit', '1']).total).toBe(before);
  });

  it('lists by tag, recipient and status, one page or all of them, and answers the API error of a bad filter', async () => {
    const tag = `batch-${randomUUID().slice(0, 8)}`;
    const to = uniqueEmail('cli-list');
    const sent = [to, uniqueEmail('cli-list-other')].map(
      (address) =>
        ok<{ id: string }>([
          'emails',
          'send',
          '--to',
          address,
          '--subject',
          'Listed',
          '--text',
          'x',
          '--tag',
          `group=${tag}`,
        ]).id,
    );
    for (const id of sent) await expect.poll(() => statusOf(id), { timeout: 30_000 }).toBe('SENT');

    const page = ok<Page>(['emails', 'list', '--tag', `group=${tag}`, '--limit', '1']);
    expect(page.total).toBe(2);
    expect(page.emails).toHaveLength(1);
    expect(page.nextCursor).toEqual(expect.any(String));
    const next = ok<Page>(['emails', 'list', '--tag', `group=${tag}`, '--limit', '1', '--after', page.nextCursor!]);
    expect([...page.emails, ...next.emails].map((e) => e.id).sort()).toEqual([...sent].sort());
    const all = ok<{ id: string }[]>(['emails', 'list', '--tag', `group:${tag}`, '--limit', '1', '--all']);
    expect(all.map((e) => e.id).sort()).toEqual([...sent].sort());
    expect(ok<Page>(['emails', 'list', '--to', to]).emails.map((e) => e.id)).toEqual([sent[0]]);
    const bySent = ok<Page>(['emails', 'list', '--status', 'SENT', '--tag', `group=${tag}`]);
    expect(bySent.emails.map((e) => e.status)).toEqual(['SENT', 'SENT']);

    const bad = failed(['emails', 'list', '--status', 'LOST'], 1);
    expect(bad).toMatchObject({ code: 'INVALID_INPUT', status: 400, requestId: expect.stringMatching(/^req_/) });
    expect(failed(['emails', 'get', 'em_aaaaaaaaaaaaaaaaaaaa'], 1)).toMatchObject({ status: 404 });
  });
});

describe('postcode templates', () => {
  it('push creates and updates from a folder; pull writes the same folder back', () => {
    const dir = join(home, 'templates');
    const folder = (name: string, files: Record<string, string>) => {
      mkdirSync(join(dir, name), { recursive: true });
      for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, name, file), content);
    };
    folder('welcome', {
      'meta.json': JSON.stringify({ name: 'Welcome mail', subject: 'Welcome, {{name}}' }),
      'content.html': '<p>Hello <b>{{name}}</b></p>\n',
      'content.txt': 'Hello {{name}}\n',
    });
    folder('receipt', {
      'meta.json': JSON.stringify({ name: 'Receipt', subject: 'Your receipt' }),
      'content.txt': 'Thanks',
    });

    type Pushed = { templates: { folder: string; id: string; action: string; changed: string[] }[] };
    const created = ok<Pushed>(['templates', 'push', dir]).templates;
    expect(created.map((t) => [t.folder, t.action])).toEqual([
      ['receipt', 'created'],
      ['welcome', 'created'],
    ]);
    const welcomeId = JSON.parse(readFileSync(join(dir, 'welcome/meta.json'), 'utf8')).id;
    expect(welcomeId).toBe(created[1]!.id);
    expect(ok<Pushed>(['templates', 'push', dir]).templates.map((t) => t.action)).toEqual(['unchanged', 'unchanged']);

    writeFileSync(join(dir, 'welcome/content.txt'), 'Hello again, {{name}}\n');
    const planned = ok<Pushed>(['templates', 'push', dir, '--dry-run']).templates[1];
    expect(planned).toMatchObject({ action: 'would update', changed: ['textBody'] });
    expect(ok<Pushed>(['templates', 'push', dir]).templates[1]).toMatchObject({
      action: 'updated',
      changed: ['textBody'],
    });

    const copy = join(home, 'pulled');
    const pulled = ok<Pushed>(['templates', 'pull', copy]).templates;
    expect(pulled.map((t) => [t.folder, t.action]).sort()).toEqual([
      ['receipt', 'created'],
      ['welcome-mail', 'created'],
    ]);
    for (const [from, to] of [
      ['welcome', 'welcome-mail'],
      ['receipt', 'receipt'],
    ]) {
      for (const file of ['content.html', 'content.txt']) {
        const original = join(dir, from!, file);
        expect(existsSync(join(copy, to!, file))).toBe(existsSync(original));
        if (existsSync(original))
          expect(readFileSync(join(copy, to!, file), 'utf8')).toBe(readFileSync(original, 'utf8'));
      }
      const meta = JSON.parse(readFileSync(join(copy, to!, 'meta.json'), 'utf8'));
      expect(meta).toEqual(JSON.parse(readFileSync(join(dir, from!, 'meta.json'), 'utf8')));
    }
    // Pulled into the pushed folder: its folders are found by id, and nothing differs.
    expect(ok<Pushed>(['templates', 'pull', dir]).templates.map((t) => t.action)).toEqual(['unchanged', 'unchanged']);

    folder('broken', { 'meta.json': JSON.stringify({ name: 'Broken' }), 'content.txt': '' });
    expect(failed(['templates', 'push', dir], 1)).toMatchObject({
      code: 'INVALID_INPUT',
      details: [{ path: 'broken/meta.json: subject', message: 'is required' }],
    });
  });
});

describe('postcode domains, otp and suppressions', () => {
  it('domains add shows the records to publish; verify by name looks them up', () => {
    const name = `cli-${randomUUID().slice(0, 8)}.example`;
    type Domain = { id: string; name: string; status: string; records: { type: string; name: string }[] };
    const added = ok<Domain>(['domains', 'add', name]);
    expect(added).toMatchObject({ id: expect.stringMatching(/^dom_/), name, status: 'pending' });
    expect(added.records.map((r) => r.type)).toEqual(expect.arrayContaining(['TXT', 'MX']));
    const verified = ok<Domain>(['domains', 'verify', name]);
    expect(verified).toMatchObject({ id: added.id, name });
    expect(verified.records.map((r) => r.name)).toEqual(added.records.map((r) => r.name));
    expect(failed(['domains', 'verify', 'nowhere.example'], 1)).toMatchObject({ code: 'DOMAIN_NOT_FOUND' });
  });

  it('otp send mails a code; verify refuses a wrong one and takes the code from the inbox', async () => {
    const env = { POSTCODE_API_KEY: service.serverOtpKey, POSTCODE_BASE_URL: service.baseUrl };
    const email = uniqueEmail('cli-otp');
    const sent = ok<{ sessionId: string; email: string; sent: boolean }>(['otp', 'send', '--email', email], env);
    expect(sent).toMatchObject({ sessionId: expect.stringMatching(/^otp_/), email, sent: true });
    const code = await codeFromInbox(service, email);
    const verify = ['otp', 'verify', '--session', sent.sessionId, '--email', email, '--code'];
    expect(failed([...verify, wrongCodeFor(code)], 1, env)).toMatchObject({ code: 'INVALID_CODE', status: 400 });
    expect(ok([...verify, code], env)).toEqual({ verified: true });
  });

  it('suppressions add, list and remove an address', () => {
    const email = uniqueEmail('cli-suppressed');
    type Entry = { email: string; reason: string; note: string | null };
    expect(ok<Entry>(['suppressions', 'add', email, '--note', 'asked by phone'])).toMatchObject({
      email,
      reason: 'manual',
      note: 'asked by phone',
    });
    const listed = ok<{ suppressions: Entry[] }>(['suppressions', 'list', '--limit', '100']).suppressions;
    expect(listed.map((s) => s.email)).toContain(email);
    expect(ok<Entry[]>(['suppressions', 'list', '--all']).map((s) => s.email)).toContain(email);
    expect(ok(['suppressions', 'remove', email])).toEqual({ email, deleted: true });
    expect(ok<Entry[]>(['suppressions', 'list', '--all']).map((s) => s.email)).not.toContain(email);
    expect(failed(['suppressions', 'remove', email], 1)).toMatchObject({ status: 404 });
  });
});

describe('the command tree and the installed bin', () => {
  it('commands --json lists every command with its flags, through node_modules/.bin/postcode', () => {
    const run = postcode(['commands', '--json'], {}, undefined, [BIN]);
    expect(run.code, run.stderr).toBe(0);
    const tree = JSON.parse(run.stdout) as {
      commands: { path: string[]; summary: string; flags: { name: string }[] }[];
      globalFlags: { name: string }[];
    };
    const paths = tree.commands.map((c) => c.path.join(' '));
    for (const path of ['login', 'emails send', 'emails list', 'templates push', 'domains add', 'otp verify']) {
      expect(paths).toContain(path);
    }
    const send = tree.commands.find((c) => c.path.join(' ') === 'emails send')!;
    expect(send.flags.map((f) => f.name)).toEqual(expect.arrayContaining(['to', 'file', 'dry-run', 'tag']));
    expect(tree.globalFlags.map((f) => f.name)).toEqual(['api-key', 'base-url', 'json', 'help']);
  });

  it('npx postcode --help and a group help', () => {
    // --no: never the registry's package of this name, should the workspace's link be missing.
    const help = postcode(['--no', '--', 'postcode', '--help'], {}, undefined, ['npx']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: postcode <command> [flags]');
    const group = postcode(['emails', '--help'], {});
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('emails send');
    expect(failed(['emails', 'sned'], 2, {})).toMatchObject({ code: 'USAGE' });
  });
});

describe('text on a terminal', () => {
  /** `postcode …args` in this process with stdout taken for a terminal. */
  async function onTerminal(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t), isTTY: true };
    const code = await main(args, { io, env: { HOME: home, ...asAccount() } });
    return { code, out: out.join(''), err: err.join('') };
  }

  it('shows tables and lines instead of JSON, and JSON again with --json', async () => {
    const domain = await onTerminal(['domains', 'add', `cli-tty-${randomUUID().slice(0, 8)}.example`]);
    expect(domain.code, domain.err).toBe(0);
    expect(domain.out).toMatch(
      /^cli-tty-\w+\.example \(dom_\w+\): pending\n\nPublish these records:\nTYPE +NAME +VALUE +STATUS\n/,
    );
    expect(domain.out).toMatch(/\nMX +\S+ +\d+ \S+ +pending\n/);

    const sent = await onTerminal([
      'emails',
      'send',
      '--to',
      uniqueEmail('cli-tty'),
      '--subject',
      'Shown',
      '--text',
      'x',
    ]);
    expect(sent.out).toMatch(/^Queued em_\w+\n$/);
    const list = await onTerminal(['emails', 'list', '--limit', '2']);
    expect(list.out).toMatch(/^ID +STATUS +CREATED +TO +SUBJECT\n/);
    expect(list.out).toMatch(/\n2 of \d+ shown; the next page: --after \S+ \(or --all\)\n$/);
    const json = await onTerminal(['emails', 'list', '--limit', '1', '--json']);
    expect(JSON.parse(json.out).emails).toHaveLength(1);

    const dry = await onTerminal([
      'emails',
      'send',
      '--to',
      'ada@example.com',
      '--subject',
      'S',
      '--text',
      'T',
      '--dry-run',
    ]);
    expect(dry.out).toContain(
      `nothing was sent.\n\nPOST ${service.baseUrl}/api/v1/emails\nAuthorization: Bearer [redacted]\n`,
    );
  });
});
