// Seeding the scale bench's control plane in bulk: accounts, their senders and a mail key each, written straight
// into the D1 database wrangler dev keeps under its state directory (while it is stopped), shaped as
// src/store/control writes them. Account number n (1, 2, …) is the same on every run: its id, tag and key follow
// from n. Each account's mail goes into its own object's file afterwards (scripts/bench/seed-objects.mjs).
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomSource } from './seed-content.mjs';

// node:sqlite is experimental in Node 22: its one-time notice is left out.
export const { DatabaseSync } = await (async () => {
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

const DAY_MS = 86_400_000;

/** The D1 database of a wrangler state directory (`--persist-to`). */
export function d1File(stateDir) {
  const dir = join(stateDir, 'v3/d1/miniflare-D1DatabaseObject');
  const files = readdirSync(dir).filter((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite');
  if (files.length !== 1) throw new Error(`expected one D1 database in ${dir}, found ${files.length}`);
  return join(dir, files[0]);
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/** Small account number `n`: { index, id, key, sender }, the same on every run. */
export function smallAccount(n) {
  const random = randomSource(1_000_003 * n);
  const id = random.id('acc');
  return {
    index: n,
    id,
    key: `pc_key_${random.base32(32)}`,
    sender: { id: random.id('snd'), email: `orders@shop${n}.example` },
  };
}

/** Adds small accounts `from`…`to - 1` to the control plane, each with a verified sender and a live mail key. */
export function seedControlAccounts(path, from, to) {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: false });
  const at = new Date(Date.now() - 60 * DAY_MS).toISOString();
  const account = db.prepare('INSERT INTO accounts (id, name, created_at, tag) VALUES (?, ?, ?, ?)');
  const sender = db.prepare(
    'INSERT INTO senders (id, account_id, email, name, verified, created_at) VALUES (?, ?, ?, ?, 1, ?)',
  );
  const key = db.prepare(`INSERT INTO api_keys (id, account_id, name, key_hash, scopes, mode, created_at)
    VALUES (?, ?, 'bench', ?, '["mail_api"]', 'live', ?)`);
  const added = [];
  db.exec('BEGIN');
  for (let n = from; n < to; n++) {
    const a = smallAccount(n);
    account.run(a.id, `Shop ${n}`, at, a.id.slice(4, 12));
    sender.run(a.sender.id, a.id, a.sender.email, `Shop ${n}`, at);
    key.run(`key_${a.id.slice(4)}`, a.id, sha256(a.key), at);
    added.push(a);
  }
  db.exec('COMMIT');
  db.close();
  return added;
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
