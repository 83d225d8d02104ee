// The send log as an account reads it: pages with filters, and one email whole.

import { canonicalAddress } from '../../mail/address';
import type { BounceReason, BounceType } from '../../mail/bounce-reasons';
import type { RecipientStatus } from '../../mail/outcome';
import { type PageRequest, pageFromRows, pageQueryParts } from '../paging';
import { bodiesHere } from './bodies';
import { listEmailEvents } from './email-events';
import { type EmailRow, type EmailStatus, SELECT_EMAIL, toEmail } from './emails';
import { repliesTo, toReply } from './inbound-messages';
import type { AccountSql } from './object-sql';
import type { EmailOwner } from './schedule';

/** `tag` is `name:value`; `bounceReason`: at least one recipient bounced for it. */
export type SendLogFilter = { status?: EmailStatus; to?: string; tag?: string; bounceReason?: BounceReason };

type Fragment = { sql: string; binds: unknown[] };

const TAGGED = ' AND EXISTS (SELECT 1 FROM email_tags t WHERE t.email_id = e.id AND t.name = ? AND t.value = ?)';
const BOUNCED_FOR = ' AND EXISTS (SELECT 1 FROM email_recipients b WHERE b.email_id = e.id AND b.bounce_reason = ?)';

/**
 * The ids of the filter's emails in the send log's order (`created_at`, `id`), read from the one index that
 * answers the most selective filter: the recipient's, the bounce reason's, then the tag's (which holds the
 * status too, in the log's order), the status's or the account's (both in that order). The other filters are
 * checked on the rows it finds.
 */
function matchingIds(owner: EmailOwner, filter: SendLogFilter): Fragment & { time: string; id: string } {
  const test = owner.test ? 1 : 0;
  const [tagName, tagValue] = filter.tag ? filter.tag.split(':') : [null, null];
  if (filter.to !== undefined) {
    // A recipient's emails (a customer's few) are found by address and sorted: no index holds them in the
    // log's order. An address is one recipient of an email at most (src/mail/compose.ts), so none comes twice.
    const binds: unknown[] = [canonicalAddress(filter.to), owner.accountId, test];
    // CROSS JOIN keeps the recipient's rows the outer loop: SQLite would otherwise walk the account's emails
    // in the log's order to skip the sort, and test each one for the recipient.
    let sql = `SELECT e.id, e.created_at FROM email_recipients r INDEXED BY email_recipients_canonical
      CROSS JOIN emails e ON e.id = r.email_id WHERE r.canonical = ? AND e.account_id = ? AND e.test = ?`;
    if (filter.status) {
      sql += ' AND e.status = ?';
      binds.push(filter.status);
    }
    if (tagName !== null) {
      sql += TAGGED;
      binds.push(tagName, tagValue);
    }
    if (filter.bounceReason) {
      sql += BOUNCED_FOR;
      binds.push(filter.bounceReason);
    }
    return { sql, binds, time: 'e.created_at', id: 'e.id' };
  }
  if (filter.bounceReason) {
    // Bounces are few beside the mail: found by reason (DISTINCT: two recipients of one email may share it)
    // and sorted, as a recipient's are.
    const binds: unknown[] = [filter.bounceReason, owner.accountId, test];
    let sql = `SELECT DISTINCT e.id, e.created_at FROM email_recipients r INDEXED BY email_recipients_bounce_reason
      CROSS JOIN emails e ON e.id = r.email_id WHERE r.bounce_reason = ? AND e.account_id = ? AND e.test = ?`;
    if (filter.status) {
      sql += ' AND e.status = ?';
      binds.push(filter.status);
    }
    if (tagName !== null) {
      sql += TAGGED;
      binds.push(tagName, tagValue);
    }
    return { sql, binds, time: 'e.created_at', id: 'e.id' };
  }
  if (tagName !== null) {
    const binds: unknown[] = [owner.accountId, test, tagName, tagValue];
    let sql = `SELECT t.email_id AS id, t.created_at FROM email_tags t INDEXED BY email_tags_log
      WHERE t.account_id = ? AND t.test = ? AND t.name = ? AND t.value = ?`;
    if (filter.status) {
      sql += ' AND t.status = ?';
      binds.push(filter.status);
    }
    return { sql, binds, time: 't.created_at', id: 't.email_id' };
  }
  if (filter.status) {
    return {
      sql: `SELECT e.id, e.created_at FROM emails e INDEXED BY emails_log_status
        WHERE e.account_id = ? AND e.test = ? AND e.status = ?`,
      binds: [owner.accountId, test, filter.status],
      time: 'e.created_at',
      id: 'e.id',
    };
  }
  return {
    sql: 'SELECT e.id, e.created_at FROM emails e INDEXED BY emails_log WHERE e.account_id = ? AND e.test = ?',
    binds: [owner.accountId, test],
    time: 'e.created_at',
    id: 'e.id',
  };
}

/**
 * How many emails match: from the counters that triggers keep (migrations/0001_init.sql) for the
 * account, a status and a tag; by counting the emails found for `to` (one customer's mail) or a bounce reason.
 */
function matchingCount(owner: EmailOwner, filter: SendLogFilter, ids: Fragment): Fragment {
  const test = owner.test ? 1 : 0;
  if (filter.to !== undefined || filter.bounceReason)
    return { sql: `SELECT COUNT(*) AS total FROM (${ids.sql})`, binds: ids.binds };
  const status = filter.status ? ' AND status = ?' : '';
  const statusBind = filter.status ? [filter.status] : [];
  if (filter.tag) {
    const [name, value] = filter.tag.split(':');
    return {
      sql: `SELECT COALESCE(SUM(n), 0) AS total FROM tag_counts
        WHERE account_id = ? AND test = ? AND name = ? AND value = ?${status}`,
      binds: [owner.accountId, test, name, value, ...statusBind],
    };
  }
  return {
    sql: `SELECT COALESCE(SUM(n), 0) AS total FROM email_counts WHERE account_id = ? AND test = ?${status}`,
    binds: [owner.accountId, test, ...statusBind],
  };
}

/**
 * One page of the send log, newest first; `to` matches any spelling of the mailbox (canonical form).
 * A test key reads only test-key mail, a live key only live mail. The page's ids come from an index (an
 * OFFSET skips index entries, not rows; a cursor skips nothing); only the page's rows are read whole.
 */
export async function listEmails(db: AccountSql, owner: EmailOwner, request: PageRequest, filter: SendLogFilter = {}) {
  const ids = matchingIds(owner, filter);
  const { position, tail } = pageQueryParts({ time: ids.time, clock: 'ms', key: ids.id }, request);
  const pageIds = `${ids.sql} ${position.sql} ${tail.sql}`;
  const count = matchingCount(owner, filter, ids);
  const [rows, counted] = await db.batch([
    db
      .prepare(`${SELECT_EMAIL} JOIN (${pageIds}) p ON p.id = e.id ORDER BY p.created_at DESC, p.id DESC`)
      .bind(...ids.binds, ...position.binds, ...tail.binds),
    db.prepare(count.sql).bind(...count.binds),
  ]);
  const page = pageFromRows(rows!.results as EmailRow[], request, (r) => ({ at: r.created_at, key: r.id }), toEmail);
  return { ...page, total: (counted!.results[0] as { total: number }).total };
}

type Kind = 'to' | 'cc' | 'bcc';
export type RecipientOutcome = {
  email: string;
  kind: Kind;
  status: RecipientStatus;
  reply?: string;
  bounceType?: BounceType;
  bounceReason?: BounceReason;
  route?: string;
};

/** One email of the owner with its recipients' outcomes and its timeline; null when not the owner's. */
export async function findEmailDetail(db: AccountSql, owner: EmailOwner, id: string) {
  const test = owner.test ? 1 : 0;
  const [email, recipients, replies] = await db.batch([
    db.prepare(`${SELECT_EMAIL} WHERE e.id = ?1 AND e.account_id = ?2 AND e.test = ?3`).bind(id, owner.accountId, test),
    db
      .prepare(
        `SELECT r.address, r.kind, r.status, r.reply, r.bounce_type, r.bounce_reason, r.route
         FROM email_recipients r JOIN emails e ON e.id = r.email_id
         WHERE r.email_id = ?1 AND e.account_id = ?2 AND e.test = ?3 ORDER BY r.position`,
      )
      .bind(id, owner.accountId, test),
    repliesTo(db, owner.accountId, id),
  ]);
  const row = email!.results[0] as EmailRow | undefined;
  if (!row) return null;
  type Row = {
    address: string;
    kind: Kind;
    status: RecipientStatus;
    reply: string | null;
    bounce_type: BounceType | null;
    bounce_reason: BounceReason | null;
    route: string | null;
  };
  const outcomes = (recipients!.results as Row[]).map(
    (r): RecipientOutcome => ({
      email: r.address,
      kind: r.kind,
      status: r.status,
      ...(r.reply === null ? {} : { reply: r.reply }),
      ...(r.bounce_type === null ? {} : { bounceType: r.bounce_type }),
      ...(r.bounce_reason === null ? {} : { bounceReason: r.bounce_reason }),
      ...(r.route === null ? {} : { route: r.route }),
    }),
  );
  const events = await listEmailEvents(db, id);
  // A body not yet moved to R2 is still here.
  return {
    email: toEmail(row),
    recipients: outcomes,
    events,
    replies: (replies!.results as Parameters<typeof toReply>[0][]).map(toReply),
    keptBody: (await bodiesHere(db, [id]))[id] ?? null,
  };
}
