// Mail an account received: one row per message (its parsed fields, flags and where R2 keeps its bytes), written
// with its `email.received` deliveries in one transaction, and read newest first.

import type { MailboxData, ParsedInbound, WebhookEvent } from '../../webhooks/events';
import { type PageRequest, readPage } from '../paging';
import type { AccountSql } from './object-sql';
import { deliveriesInsert, insertedIds } from './webhooks';

export type StoredAttachment = {
  filename: string | null;
  contentType: string;
  size: number;
  contentId: string | null;
  disposition: 'attachment' | 'inline' | null;
  key: string;
};

export type InboundMessage = ParsedInbound & {
  id: string;
  accountId: string;
  routeId: string;
  action: 'webhook' | 'store';
  envelopeFrom: string;
  envelopeTo: string;
  headers: { key: string; value: string }[];
  attachments: StoredAttachment[];
  autoReply: boolean;
  deliveryReport: boolean;
  /** It claims one of the account's own domains and fails DMARC. */
  spoofed: boolean;
  size: number;
  rawKey: string;
  receivedAt: number;
};

type Row = Record<string, unknown> & {
  id: string;
  received_at: number;
};

const toMessage = (r: Row): InboundMessage => ({
  id: r.id,
  accountId: r.account_id as string,
  routeId: r.route_id as string,
  action: r.action as InboundMessage['action'],
  envelopeFrom: r.envelope_from as string,
  envelopeTo: r.envelope_to as string,
  from: r.from_address === null ? null : { address: r.from_address as string, name: (r.from_name as string) ?? '' },
  toList: JSON.parse(r.to_list as string),
  cc: JSON.parse(r.cc_list as string),
  replyTo: JSON.parse(r.reply_to_list as string),
  subject: r.subject as string | null,
  date: r.sent_date as string | null,
  messageId: r.message_id as string | null,
  inReplyTo: r.in_reply_to as string | null,
  references: JSON.parse(r.reference_ids as string),
  emailId: r.email_id as string | null,
  text: r.text_body as string | null,
  html: r.html_body as string | null,
  headers: JSON.parse(r.headers as string),
  attachments: JSON.parse(r.attachments as string),
  authentication: { spf: r.spf, dkim: r.dkim, dmarc: r.dmarc } as InboundMessage['authentication'],
  autoReply: r.auto_reply === 1,
  deliveryReport: r.delivery_report === 1,
  spoofed: r.spoofed === 1,
  size: r.size as number,
  rawKey: r.raw_key as string,
  receivedAt: r.received_at,
});

/**
 * The first of `candidates` (email ids a reply names, In-Reply-To first) that is an email of this account: its
 * thread. Another account's id is not in this database, so it links nothing.
 */
export async function threadOf(db: AccountSql, candidates: string[]): Promise<string | null> {
  for (const id of candidates) {
    if (await db.prepare('SELECT 1 AS x FROM emails WHERE id = ?').bind(id).first()) return id;
  }
  return null;
}

/**
 * Stores a received message, linked to the email it replies to (`threadCandidates`), and records `event` (given
 * for a `webhook` route's mail that is not automatic, its `emailId` filled here) for the endpoints subscribed to
 * it. The thread and the deliveries' ids.
 */
export async function recordInbound(
  db: AccountSql,
  message: Omit<InboundMessage, 'emailId'>,
  threadCandidates: string[],
  event: Extract<WebhookEvent, { type: 'email.received' }> | null,
): Promise<{ emailId: string | null; deliveryIds: string[] }> {
  const emailId = await threadOf(db, threadCandidates);
  const m = message;
  await db
    .prepare(
      `INSERT INTO inbound_messages (id, account_id, route_id, action, envelope_from, envelope_to, from_address,
         from_name, to_list, cc_list, reply_to_list, subject, sent_date, message_id, in_reply_to, reference_ids,
         email_id, text_body, html_body, headers, attachments, spf, dkim, dmarc, auto_reply, delivery_report,
         spoofed, size, raw_key, received_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
         ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)`,
    )
    .bind(
      m.id,
      m.accountId,
      m.routeId,
      m.action,
      m.envelopeFrom,
      m.envelopeTo,
      m.from?.address ?? null,
      m.from?.name ?? null,
      JSON.stringify(m.toList),
      JSON.stringify(m.cc),
      JSON.stringify(m.replyTo),
      m.subject,
      m.date,
      m.messageId,
      m.inReplyTo,
      JSON.stringify(m.references),
      emailId,
      m.text,
      m.html,
      JSON.stringify(m.headers),
      JSON.stringify(m.attachments),
      m.authentication.spf,
      m.authentication.dkim,
      m.authentication.dmarc,
      m.autoReply ? 1 : 0,
      m.deliveryReport ? 1 : 0,
      m.spoofed ? 1 : 0,
      m.size,
      m.rawKey,
      m.receivedAt,
    )
    .run();
  if (!event) return { emailId, deliveryIds: [] };
  const threaded = { ...event, data: { ...event.data, emailId } };
  const deliveryIds = insertedIds(await deliveriesInsert(db, m.accountId, [threaded], m.receivedAt).all());
  return { emailId, deliveryIds };
}

export type InboundFilters = { to?: string; from?: string; since?: number; until?: number };

/** A page of the account's received mail, newest first, by recipient, sender and time. */
export function listInbound(db: AccountSql, accountId: string, filters: InboundFilters, request: PageRequest) {
  const where = [
    'account_id = ?',
    ...(filters.to ? ['envelope_to = ?'] : []),
    ...(filters.from ? ['from_address = ?'] : []),
    ...(filters.since === undefined ? [] : ['received_at >= ?']),
    ...(filters.until === undefined ? [] : ['received_at < ?']),
  ].join(' AND ');
  const binds = [
    accountId,
    ...(filters.to ? [filters.to] : []),
    ...(filters.from ? [filters.from] : []),
    ...(filters.since === undefined ? [] : [filters.since]),
    ...(filters.until === undefined ? [] : [filters.until]),
  ];
  return readPage(
    db,
    {
      select: `SELECT * FROM inbound_messages WHERE ${where}`,
      binds,
      order: { time: 'received_at', clock: 'ms', key: 'id' },
      count: db.prepare(`SELECT COUNT(*) AS total FROM inbound_messages WHERE ${where}`).bind(...binds),
    },
    request,
    toMessage,
  );
}

export async function findInbound(db: AccountSql, accountId: string, id: string): Promise<InboundMessage | null> {
  const row = await db
    .prepare('SELECT * FROM inbound_messages WHERE id = ? AND account_id = ?')
    .bind(id, accountId)
    .first<Row>();
  return row ? toMessage(row) : null;
}

/** An email's detail lists at most this many replies (the oldest); GET /api/v1/inbound has them all. */
export const MAX_LISTED_REPLIES = 50;

export type Reply = {
  inboundId: string;
  from: MailboxData | null;
  subject: string | null;
  receivedAt: number;
  autoReply: boolean;
  deliveryReport: boolean;
};

/** The replies received to one of the account's emails, oldest first (through inbound_messages_email). */
export const repliesTo = (db: AccountSql, accountId: string, emailId: string) =>
  db
    .prepare(
      `SELECT id, from_address, from_name, subject, received_at, auto_reply, delivery_report FROM inbound_messages
       WHERE email_id = ?1 AND account_id = ?2 ORDER BY received_at, id LIMIT ${MAX_LISTED_REPLIES}`,
    )
    .bind(emailId, accountId);

export const toReply = (r: Row): Reply => ({
  inboundId: r.id,
  from: r.from_address === null ? null : { address: r.from_address as string, name: (r.from_name as string) ?? '' },
  subject: r.subject as string | null,
  receivedAt: r.received_at,
  autoReply: r.auto_reply === 1,
  deliveryReport: r.delivery_report === 1,
});
