// Seeding the scale bench's D1 in bulk: rows written straight into the SQLite file wrangler dev keeps under
// its state directory (while it is stopped), shaped as src/db writes them, in transactions of 10,000 emails.
// One large account (the demo account of scripts/start.mjs) holds LARGE_SHARE of the mail, SMALL_ACCOUNTS
// small ones the rest. Each email gets its recipients, timeline, tags, webhook deliveries and bounces the
// way the delivery path leaves them (scripts/bench/seed-email.mjs).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { bodyMaker, randomSource } from './seed-content.mjs';
import { emailOf } from './seed-email.mjs';

// node:sqlite is experimental in Node 22: its one-time notice is left out.
const { DatabaseSync } = await (async () => {
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    if (!String(warning).includes('SQLite')) emitWarning.call(process, warning, ...rest);
  };
  try {
    return await import('node:sqlite');
  } finally {
    process.emitWarning = emitWarning;
  }
})();

export const SMALL_ACCOUNTS = 100;
const LARGE_SHARE = 0.9;
const BATCH = 10_000;
const DAY_MS = 86_400_000;
const HOOK_EVENTS = ['email.sent', 'email.failed', 'email.suppressed', 'otp.verified'];

/** The D1 database of a wrangler state directory (`--persist-to`). */
export function d1File(stateDir) {
  const dir = join(stateDir, 'v3/d1/miniflare-D1DatabaseObject');
  const files = readdirSync(dir).filter((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite');
  if (files.length !== 1) throw new Error(`expected one D1 database in ${dir}, found ${files.length}`);
  return join(dir, files[0]);
}

const iso = (ms) => new Date(ms).toISOString();
const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/**
 * The accounts, senders, templates and webhook endpoints (once, before the first emails), and a mail key of
 * the first small account; returns that key.
 */
export function seedAccounts(path, ready, webhookUrl) {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: false });
  const random = randomSource(1);
  const bodies = bodyMaker(2);
  const at = iso(Date.now() - 60 * DAY_MS);
  const smallKey = `pc_key_${random.base32(32)}`;
  const insert = (sql) => db.prepare(sql);
  const account = insert('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)');
  const sender = insert(
    'INSERT INTO senders (id, account_id, email, name, verified, created_at) VALUES (?, ?, ?, ?, 1, ?)',
  );
  const template =
    insert(`INSERT INTO templates (id, account_id, name, subject, html_body, text_body, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const endpoint = insert(`INSERT INTO webhook_endpoints (id, account_id, url, events, description, secret, created_at,
    updated_at) VALUES (?, ?, ?, ?, 'bench', ?, ?, ?)`);
  db.exec('BEGIN');
  const accounts = [{ id: ready.accountId, templates: 50, hook: true }];
  for (let i = 1; i <= SMALL_ACCOUNTS; i++) {
    const id = random.id('acc');
    account.run(id, `Shop ${i}`, at);
    sender.run(random.id('snd'), id, `orders@shop${i}.example`, `Shop ${i}`, at);
    accounts.push({ id, templates: 3, hook: i % 5 === 0 });
  }
  for (const { id, templates, hook } of accounts) {
    for (let t = 0; t < templates; t++) {
      const subject = `Template ${t}`;
      template.run(random.id('tpl'), id, `template-${t}`, subject, bodies.html(subject, '{{name}}'), '', at, at);
    }
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    if (hook) endpoint.run(random.id('whk'), id, webhookUrl, JSON.stringify(HOOK_EVENTS), secret, at, at);
  }
  db.prepare(`INSERT INTO api_keys (id, account_id, name, key_hash, scopes, mode, created_at)
    VALUES (?, ?, 'bench small', ?, '["mail_api"]', 'live', ?)`).run(
    random.id('key'),
    accounts[1].id,
    sha256(smallKey),
    at,
  );
  db.exec('COMMIT');
  db.close();
  return smallKey;
}

/** What the app knows of each account: its sender, templates and webhook endpoint (read back from the file). */
function accountsOf(db, largeId) {
  const byId = new Map();
  for (const { id } of db.prepare('SELECT id FROM accounts ORDER BY created_at, id').all()) {
    byId.set(id, { id, templates: [], endpoint: null, sender: null, index: 0 });
  }
  for (const s of db.prepare('SELECT id, account_id, email FROM senders').all()) byId.get(s.account_id).sender = s;
  for (const t of db.prepare('SELECT id, account_id FROM templates').all()) byId.get(t.account_id).templates.push(t.id);
  for (const w of db.prepare('SELECT id, account_id FROM webhook_endpoints').all())
    byId.get(w.account_id).endpoint = w.id;
  const small = [...byId.values()].filter((a) => a.id !== largeId);
  small.forEach((a, i) => {
    a.index = i + 1;
  });
  return { large: byId.get(largeId), small };
}

/**
 * Adds emails `from`…`to - 1` (their number decides the seed, so growing 10k → 100k adds the difference).
 * `keep(id, canonical)` sees every final live email of the large account (the bench samples them). Returns
 * the rows written per table. Each row names its body in R2 as the app stores it; only the bodies the
 * detail reads are written (scripts/bench/seed-bodies.mjs). The counters' triggers run as the rows go in.
 */
export function seedEmails(path, { from, to, largeId, keep }) {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: false });
  db.exec('PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144');
  const accounts = accountsOf(db, largeId);
  const random = randomSource(from + 7);
  const now = Date.now();
  const rows = { emails: 0, recipients: 0, events: 0, tags: 0, deliveries: 0, suppressions: 0, otp: 0 };
  const run = (name, sql) => {
    const statement = db.prepare(sql);
    return (...values) => {
      rows[name] += Number(statement.run(...values).changes);
    };
  };
  const email = run(
    'emails',
    `INSERT INTO emails (id, account_id, template_id, sender_id, from_email, from_name, subject, priority,
      status, attempts, last_reply, created_at, updated_at, sent_at, held, due_at, scheduled_at, reply_to,
      headers, tags, test) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`,
  );
  const recipient = run(
    'recipients',
    'INSERT INTO email_recipients (email_id, position, address, canonical, kind, status, reply) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const event = run('events', 'INSERT INTO email_events (email_id, seq, type, at, detail) VALUES (?, ?, ?, ?, ?)');
  const tag = run(
    'tags',
    'INSERT INTO email_tags (email_id, account_id, test, created_at, status, name, value) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const delivery = run(
    'deliveries',
    `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, data, status, attempts, last_status,
      last_error, due_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const suppress = run(
    'suppressions',
    `INSERT OR IGNORE INTO suppressions (account_id, email, reason, note, email_id, source, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const verification = run(
    'otp',
    `INSERT INTO otp_verifications (id, account_id, channel, session_id, email, sent_at, verified_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  // Each account's customers: about four emails each at the target size.
  const customers = (account) =>
    Math.max(50, Math.floor((to * (account.index === 0 ? LARGE_SHARE : (1 - LARGE_SHARE) / SMALL_ACCOUNTS)) / 4));
  for (let n = from; n < to; n++) {
    if ((n - from) % BATCH === 0) db.exec('BEGIN');
    const account = random.next() < LARGE_SHARE ? accounts.large : random.pick(accounts.small);
    const e = emailOf(random, account, { n, now, customers: customers(account) });
    email(...e.row);
    for (const r of e.recipients) recipient(e.id, ...r);
    for (const [i, ev] of e.events.entries()) event(e.id, i + 1, ...ev);
    for (const t of e.tags) tag(e.id, ...e.owner, e.status, ...t);
    for (const [deliveryId, ...rest] of e.deliveries) delivery(deliveryId, account.endpoint, ...rest);
    for (const s of e.suppressions) suppress(account.id, ...s);
    if (e.otp) verification(e.otp[0], account.id, ...e.otp.slice(1));
    if (account.index === 0 && e.sample) keep(e.id, e.sample);
    if ((n - from) % BATCH === BATCH - 1 || n === to - 1) db.exec('COMMIT');
  }
  db.exec('PRAGMA journal_mode = WAL');
  // A running service keeps the pages of its rows in the OS cache; a bulk load leaves the last pages it
  // wrote there instead. Counting walks every page of the emails table (not its overflow pages).
  db.prepare('SELECT COUNT(*) FROM emails NOT INDEXED').get();
  db.close();
  return rows;
}

/**
 * The file's size after a checkpoint, and the bytes its pages in use take (free pages left out: what a
 * VACUUM would leave, short of repacking half-full pages), with the number of emails; and the bytes in use
 * of each table with its indexes (SQLite's dbstat).
 */
export function footprint(path) {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: false });
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const one = (sql) => Object.values(db.prepare(sql).get())[0];
  const usedBytes = (one('PRAGMA page_count') - one('PRAGMA freelist_count')) * one('PRAGMA page_size');
  const emails = one('SELECT COUNT(*) FROM emails');
  const tables = db
    .prepare(
      `SELECT s.tbl_name AS name, SUM(d.pgsize) AS bytes FROM dbstat d JOIN sqlite_schema s ON s.name = d.name
       GROUP BY s.tbl_name ORDER BY bytes DESC`,
    )
    .all()
    .map((row) => ({ name: row.name, bytes: Number(row.bytes) }));
  db.close();
  return { fileBytes: statSync(path).size, usedBytes, emails, tables };
}
