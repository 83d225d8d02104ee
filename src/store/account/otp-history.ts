import { newId } from '../../ids';
import type { OtpChannel, VerificationEntry } from '../../otp/session';
import { otpEvent } from '../../webhooks/produce';
import { isoOf, msOf } from '../time';
import type { AccountSql } from './object-sql';
import { otpOutcomeInsert } from './otp-outcomes';
import { deliveriesInsert, insertedIds } from './webhooks';

export type OtpVerification = { id: string; email: string; sentAt: string; verifiedAt: string };

type Row = { id: string; email: string; sent_at: number; verified_at: number };

const toVerification = (row: Row): OtpVerification => ({
  id: row.id,
  email: row.email,
  sentAt: isoOf(row.sent_at),
  verifiedAt: isoOf(row.verified_at),
});

/**
 * Idempotent: a session has at most one row (a second write of the same session is ignored), and its
 * `otp.verified` / `email_verification.verified` event and its outcome are recorded with the row, once. Returns the
 * webhook deliveries to queue.
 */
export async function recordVerification(db: AccountSql, entry: VerificationEntry): Promise<string[]> {
  const type = entry.channel === 'email_verification' ? 'email_verification.verified' : 'otp.verified';
  const [, deliveries] = await db.batch([
    db
      .prepare(
        'INSERT OR IGNORE INTO otp_verifications (id, account_id, channel, session_id, email, sent_at, verified_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .bind(
        newId('ver'),
        entry.accountId,
        entry.channel,
        entry.sessionId,
        entry.email,
        msOf(entry.sentAt),
        msOf(entry.verifiedAt),
      ),
    deliveriesInsert(db, entry.accountId, [otpEvent(type, entry)], msOf(entry.verifiedAt), 'changes() > 0'),
    otpOutcomeInsert(db, {
      sessionId: entry.sessionId,
      accountId: entry.accountId,
      channel: entry.channel,
      outcome: 'verified',
      sentAt: msOf(entry.sentAt),
      endedAt: msOf(entry.verifiedAt),
    }),
  ]);
  return insertedIds(deliveries);
}

/** Newest first. */
export async function listVerifications(db: AccountSql, accountId: string, channel: OtpChannel, limit: number) {
  const rows = await db
    .prepare(
      `SELECT id, email, sent_at, verified_at FROM otp_verifications WHERE account_id = ? AND channel = ?
       ORDER BY verified_at DESC, id DESC LIMIT ?`,
    )
    .bind(accountId, channel, limit)
    .all<Row>();
  return rows.results.map(toVerification);
}
