// Seeding the scale bench's data plane in bulk: each account's templates, webhook endpoint and mail written
// straight into the SQLite file of the account's own object (AccountStore), which wrangler dev keeps under its
// state directory, while it is stopped. The objects are made first by the running service (one request per
// account); each file names its account in `object_state`. Rows are shaped as src/store/account writes them,
// in transactions of 10,000 emails; the counters' triggers run as the rows go in. Each email gets its
// recipients, timeline, tags, webhook deliveries and bounces the way the delivery path leaves them
// (scripts/bench/seed-email.mjs).
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from './seed.mjs';
import { bodyMaker, randomSource } from './seed-content.mjs';
import { emailOf } from './seed-email.mjs';

const BATCH = 10_000;
const DAY_MS = 86_400_000;
const HOOK_EVENTS = ['email.sent', 'email.failed', 'email.suppressed', 'otp.verified'];

/** Every account object's file in a wrangler state directory, by the account it names. */
export function objectFiles(stateDir) {
  const dir = join(stateDir, 'v3/do/postcode-AccountStore');
  const files = new Map();
  if (!existsSync(dir)) return files;
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.sqlite'))) {
    const path = join(dir, name);
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const row = db.prepare("SELECT value FROM object_state WHERE key = 'account'").get();
      if (row) files.set(String(row.value), path);
    } catch {
      // An object that never ran an operation has no tables yet: no account of the bench's.
    } finally {
      db.close();
    }
  }
  return files;
}

const open = (path) => {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: false });
  db.exec('PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144');
  return db;
};
const close = (db) => {
  db.exec('PRAGMA journal_mode = WAL');
  db.close();
};

/**
 * An account's templates and (when `webhookUrl` is given) a webhook endpoint; returns what its emails refer to:
 * { templates: [ids], endpoint: id | null }.
 */
function seedAccountRecords(db, accountId, { templates, webhookUrl, seed }) {
  const random = randomSource(seed);
  const bodies = bodyMaker(seed + 1);
  const at = new Date(Date.now() - 60 * DAY_MS).toISOString();
  const template = db.prepare(`INSERT INTO templates (id, account_id, name, subject, html_body, text_body,
    created_at, updated_at) VALUES (?, ?, ?, ?, ?, '', ?, ?)`);
  const ids = [];
  for (let t = 0; t < templates; t++) {
    const id = random.id('tpl');
    template.run(id, accountId, `template-${t}`, `Template ${t}`, bodies.html(`Template ${t}`, '{{name}}'), at, at);
    ids.push(id);
  }
  let endpoint = null;
  if (webhookUrl) {
    endpoint = random.id('whk');
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    db.prepare(`INSERT INTO webhook_endpoints (id, account_id, url, events, description, secret, created_at,
      updated_at) VALUES (?, ?, ?, ?, 'bench', ?, ?, ?)`).run(
      endpoint,
      accountId,
      webhookUrl,
      JSON.stringify(HOOK_EVENTS),
      secret,
      at,
      at,
    );
  }
  return { templates: ids, endpoint };
}

/** Reads back what seedAccountRecords wrote: the account's templates and endpoint. */
function recordsOf(db) {
  return {
    templates: db
      .prepare('SELECT id FROM templates')
      .all()
      .map((t) => t.id),
    endpoint: db.prepare('SELECT id FROM webhook_endpoints LIMIT 1').get()?.id ?? null,
  };
}

/** The statements of one email's rows, each counting what it wrote into `rows`. */
function emailWriters(db, rows) {
  const run = (name, sql) => {
    const statement = db.prepare(sql);
    return (...values) => {
      rows[name] = (rows[name] ?? 0) + Number(statement.run(...values).changes);
    };
  };
  return {
    email: run(
      'emails',
      `INSERT INTO emails (id, account_id, template_id, sender_id, from_email, from_name, subject, priority,
        status, attempts, last_reply, created_at, updated_at, sent_at, held, due_at, scheduled_at, reply_to,
        headers, tags, test) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`,
    ),
    recipient: run(
      'recipients',
      'INSERT INTO email_recipients (email_id, position, address, canonical, kind, status, reply) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    event: run('events', 'INSERT INTO email_events (email_id, seq, type, at, detail) VALUES (?, ?, ?, ?, ?)'),
    tag: run(
      'tags',
      'INSERT INTO email_tags (email_id, account_id, test, created_at, status, name, value) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    delivery: run(
      'deliveries',
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_type, data, status, attempts, last_status,
        last_error, due_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    suppress: run(
      'suppressions',
      `INSERT OR IGNORE INTO suppressions (account_id, email, reason, note, email_id, source, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    verification: run(
      'otp',
      `INSERT INTO otp_verifications (id, account_id, channel, session_id, email, sent_at, verified_at)
        VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
  };
}

/**
 * Adds emails `from`…`to - 1` of one account (their numbers decide the seed, so growing 10k → 100k adds the
 * difference) into its object's file at `path`. `account` is { id, index, sender: { id, email } }; on the first
 * call (`from` 0) its `templates` and webhook endpoint (`webhookUrl`) go in first. `keep(id, canonical)` sees
 * every final live email (the bench samples them). Returns the rows written per table.
 */
export function seedAccountEmails(path, account, { from, to, customers, templates = 3, webhookUrl = null, keep }) {
  const db = open(path);
  const rows = {};
  const records =
    from === 0
      ? seedAccountRecords(db, account.id, { templates, webhookUrl, seed: 17 * account.index + 1 })
      : recordsOf(db);
  const writers = emailWriters(db, rows);
  const owner = { ...account, ...records };
  const random = randomSource(account.index * 7_919 + from + 7);
  const now = Date.now();
  for (let n = from; n < to; n++) {
    if ((n - from) % BATCH === 0) db.exec('BEGIN');
    const e = emailOf(random, owner, { n, now, customers });
    writers.email(...e.row);
    for (const r of e.recipients) writers.recipient(e.id, ...r);
    for (const [i, ev] of e.events.entries()) writers.event(e.id, i + 1, ...ev);
    for (const t of e.tags) writers.tag(e.id, ...e.owner, e.status, ...t);
    for (const [deliveryId, ...rest] of e.deliveries) writers.delivery(deliveryId, owner.endpoint, ...rest);
    for (const s of e.suppressions) writers.suppress(account.id, ...s);
    if (e.otp) writers.verification(e.otp[0], account.id, ...e.otp.slice(1));
    if (e.sample) keep?.(e.id, e.sample);
    if ((n - from) % BATCH === BATCH - 1 || n === to - 1) db.exec('COMMIT');
  }
  // A running service keeps the pages of its rows in the OS cache; a bulk load leaves the last pages it
  // wrote there instead. Counting walks every page of the emails table (not its overflow pages).
  if (to - from >= BATCH) db.prepare('SELECT COUNT(*) FROM emails NOT INDEXED').get();
  close(db);
  return rows;
}
