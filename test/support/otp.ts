// OTP test helpers shared by the route tests: session objects, expiry, wrong codes, seeded history.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { newSessionId, sessionObjectIdOf } from '../../src/ids';
import type { OtpChannel } from '../../src/otp/session';
import { accountDb } from './account-db';
import { call, codeFromInbox } from './api';
import type { LegacyOtpSent, OtpSent } from './responses';

/**
 * Sends a code to `email` through the send route `path` and reads it from the delivered mail; `D` is the send
 * route's `data` (the legacy alias answers without `email`, email verification adds `hostedVerifyUrl`).
 */
export async function sendAndRead<D extends LegacyOtpSent = OtpSent>(
  path: string,
  token: string,
  email: string,
  extra: Record<string, unknown> = {},
) {
  const res = await call<D>('POST', path, { token, body: { email, ...extra } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  const code = await codeFromInbox(email, typeof extra.otpDigits === 'number' ? extra.otpDigits : 6);
  return { sessionId: res.json.data.sessionId, expiresAt: res.json.data.expiresAt, code, res };
}

/** A code of the same length that is not the right one. */
export const wrongCode = (code: string) => code.slice(0, -1) + String((Number(code.at(-1)) + 1) % 10);

/** The recipient object holding a session (the session id carries the object's id). */
export const sessionStub = (sessionId: string) =>
  env.OTP_RECIPIENT.get(env.OTP_RECIPIENT.idFromString(sessionObjectIdOf(sessionId)!));

import { KEEP_AFTER_EXPIRY_MS } from '../../src/durable-objects/recipient-sessions';

export { KEEP_AFTER_EXPIRY_MS };

/** A well-formed session id that names a real recipient object but no session in it. */
export const unknownSessionId = () =>
  newSessionId(env.OTP_RECIPIENT.idFromName(`acc_nobody:${crypto.randomUUID()}`).toString());

/** Moves the session's expiry `agoMs` into the past (the object's own clock decides expiry). */
export async function expireSession(sessionId: string, agoMs = 60_000) {
  await runInDurableObject(sessionStub(sessionId), (_instance, state) => {
    state.storage.sql.exec('UPDATE otp_sessions SET expires_at = ? WHERE id = ?', Date.now() - agoMs, sessionId);
  });
}

export type SeededVerification = { email: string; sentAt: string; verifiedAt: string };

/** `count` verifications a minute apart, written straight into the account's object (history limit tests). */
export async function seedVerifications(accountId: string, channel: OtpChannel, count: number, prefix: string) {
  const rows: SeededVerification[] = Array.from({ length: count }, (_, i) => ({
    email: `${prefix}${i}@example.com`,
    sentAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000 - 30_000).toISOString(),
    verifiedAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
  }));
  const db = accountDb(accountId);
  const insert = db.prepare(
    'INSERT INTO otp_verifications (id, account_id, channel, session_id, email, sent_at, verified_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  await db.batch(
    rows.map((r) =>
      insert.bind(
        `ver_seed${crypto.randomUUID().slice(0, 12)}`,
        accountId,
        channel,
        `otp_seed${crypto.randomUUID()}`,
        r.email,
        Date.parse(r.sentAt),
        Date.parse(r.verifiedAt),
      ),
    ),
  );
  return rows;
}

export { SESSION_ID } from '../../src/ids';
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** `expiresAt` lies `seconds` after the send, which happened between `before` and `after` (± 1 s). */
export function expectExpiry(expiresAt: string, window: { before: number; after: number }, seconds = 600) {
  const at = Date.parse(expiresAt);
  expect(at).toBeGreaterThanOrEqual(window.before + seconds * 1000 - 1000);
  expect(at).toBeLessThanOrEqual(window.after + seconds * 1000 + 1000);
}

/**
 * The recipient object's alarm clears a session past its keep time: a session that expired pending first has
 * its end owed to the account's object (`expired`), which the next alarm writes before the row goes. Runs both alarms.
 */
export async function clearExpiredSession(sessionId: string) {
  const stub = sessionStub(sessionId);
  await expireSession(sessionId, KEEP_AFTER_EXPIRY_MS + 60_000);
  expect(await runDurableObjectAlarm(stub)).toBe(true);
  await runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec('UPDATE otp_sessions SET fact_at = ? WHERE id = ?', Date.now() - 120_000, sessionId);
  });
  expect(await runDurableObjectAlarm(stub)).toBe(true);
}
