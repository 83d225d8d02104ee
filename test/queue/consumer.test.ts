// The delivery consumer against the real SMTP sink, with batches built by hand so acks and retries are visible.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { newEmailId } from '../../src/ids';
import { sendOtp, verifyOtp } from '../../src/otp/engine';
import { retryDelaySeconds } from '../../src/queue/retry';
import { accountStore } from '../../src/store/account/client';
import { codeFromInbox, inbox, newAccount, uniqueAddress } from '../support/api';
import { makeDue, runBatch, runJobs, storedEmail } from '../support/delivery';
import { sessionStub } from '../support/otp';

/** The email as its account's object holds it. */
const findEmail = (accountId: string, id: string) => accountStore(env, accountId).findEmail(id);

describe('queue consumer: delivery outcomes', () => {
  it('acks each message on its own: accepted → SENT, 550 → FAILED, 451 → retried with a delay', async () => {
    const { accountId } = await newAccount();
    const okTo = uniqueAddress('ok');
    const rejectTo = uniqueAddress('reject550');
    const tempTo = uniqueAddress('tempfail-once');
    const ids = [
      await storedEmail(accountId, okTo),
      await storedEmail(accountId, rejectTo),
      await storedEmail(accountId, tempTo),
    ];

    const result = await runBatch(ids, 1, 'postcode-mail', { ...env, MAIL_RETRY_BASE_SECONDS: '10' });
    expect(result.ackAll).toBe(false);
    expect(result.explicitAcks.sort()).toEqual([`msg-0-${ids[0]}`, `msg-1-${ids[1]}`].sort());
    expect(result.retryMessages.map((m) => m.msgId)).toEqual([`msg-2-${ids[2]}`]);
    expect(result.delays).toEqual({ [`msg-2-${ids[2]}`]: 10 });

    const [ok, rejected, temp] = await Promise.all(ids.map((id) => findEmail(accountId, id)));
    expect(ok).toMatchObject({ status: 'SENT', attempts: 1 });
    expect(ok!.sentAt).not.toBeNull();
    expect(rejected).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(rejected!.lastReply).toMatch(/550/);
    expect(temp).toMatchObject({ status: 'QUEUED', attempts: 1 });
    expect(temp!.lastReply).toMatch(/451/);
    expect(await inbox(okTo)).toHaveLength(1);
    expect(await inbox(rejectTo)).toHaveLength(0);
    expect(await inbox(tempTo)).toHaveLength(0);

    // Early, the retry's message is a duplicate: acked, nothing sent. Once due, it is delivered once,
    // with the same Message-ID.
    expect((await runBatch([ids[2]!], 2)).explicitAcks).toEqual([`msg-0-${ids[2]}`]);
    expect(await findEmail(accountId, ids[2]!)).toMatchObject({ status: 'QUEUED', attempts: 1 });
    await makeDue(ids[2]!);
    const retry = await runBatch([ids[2]!], 2);
    expect(retry.explicitAcks).toEqual([`msg-0-${ids[2]}`]);
    expect(await findEmail(accountId, ids[2]!)).toMatchObject({ status: 'SENT', attempts: 2 });
    const delivered = await inbox(tempTo);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.messageId).toBe(`<${ids[2]}@postcode.dev>`);
  });

  it('two messages of one email in the same batch: sent once, both acked', async () => {
    const { accountId } = await newAccount();
    const to = uniqueAddress('twice');
    const id = await storedEmail(accountId, to);
    const result = await runBatch([id, id]);
    expect(result.explicitAcks.sort()).toEqual([`msg-0-${id}`, `msg-1-${id}`]);
    expect(result.retryMessages).toEqual([]);
    expect(await findEmail(accountId, id)).toMatchObject({ status: 'SENT', attempts: 1 });
    expect(await inbox(to)).toHaveLength(1);
  });

  it('acks a redelivered message of an email already SENT without sending it again', async () => {
    const { accountId } = await newAccount();
    const to = uniqueAddress('dup');
    const id = await storedEmail(accountId, to);
    await runBatch([id]);
    const again = await runBatch([id], 2);
    expect(again.explicitAcks).toEqual([`msg-0-${id}`]);
    expect(again.retryMessages).toEqual([]);
    expect(await inbox(to)).toHaveLength(1);
  });

  it('a connection dropped after DATA is retried, and the rest of the batch is still delivered once', async () => {
    const { accountId } = await newAccount();
    const dropTo = uniqueAddress('drop-once');
    const afterTo = uniqueAddress('after');
    const ids = [await storedEmail(accountId, dropTo), await storedEmail(accountId, afterTo)];
    const result = await runBatch(ids);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual([`msg-0-${ids[0]}`]);
    expect(result.explicitAcks).toEqual([`msg-1-${ids[1]}`]);
    expect(await findEmail(accountId, ids[0]!)).toMatchObject({ status: 'QUEUED' });
    expect(await inbox(afterTo)).toHaveLength(1);
    await makeDue(ids[0]!);
    await runBatch([ids[0]!], 2);
    expect(await findEmail(accountId, ids[0]!)).toMatchObject({ status: 'SENT' });
    expect(await inbox(dropTo)).toHaveLength(1);
  });

  it('retries (never SENT) while the SMTP server is unreachable', async () => {
    const { accountId } = await newAccount();
    const id = await storedEmail(accountId, uniqueAddress('down'));
    const result = await runBatch([id], 1, 'postcode-mail', { ...env, SMTP_PORT: '9' });
    expect(result.retryMessages).toHaveLength(1);
    const email = await findEmail(accountId, id);
    expect(email).toMatchObject({ status: 'QUEUED', attempts: 1 });
    expect(email!.lastReply).toBeTruthy();
  });

  it('refuses to send in plaintext when STARTTLS is required but the server does not offer it', async () => {
    const { accountId } = await newAccount();
    const to = uniqueAddress('starttls');
    const id = await storedEmail(accountId, to);
    const result = await runBatch([id], 1, 'postcode-mail', { ...env, SMTP_SECURE: 'starttls' });
    expect(result.retryMessages.map((m) => m.msgId)).toEqual([`msg-0-${id}`]);
    const email = await findEmail(accountId, id);
    expect(email).toMatchObject({ status: 'QUEUED', attempts: 1 });
    expect(email!.lastReply).toMatch(/STARTTLS/);
    expect(await inbox(to)).toHaveLength(0);
  });

  it('acks messages for unknown emails', async () => {
    const { accountId } = await newAccount();
    const unknown = newEmailId(accountId);
    const result = await runBatch([unknown]);
    expect(result.explicitAcks).toEqual([`msg-0-${unknown}`]);
  });
});

describe('queue consumer: OTP retries', () => {
  it('an OTP retry mails a fresh code for the session (the first stays valid), and it verifies', async () => {
    const { accountId } = await newAccount();
    const email = uniqueAddress('legacy-otp');
    const caller = { accountId, channel: 'backend', rateLimitCode: 'OTP_RATE_LIMITED' } as const;
    const sent = await sendOtp(env, caller, { email, expiresInSeconds: 600, otpDigits: 6 });
    expect(sent.sent).toBe(true);
    const first = await codeFromInbox(email);

    const job = {
      kind: 'otp-retry' as const,
      sessionId: sent.sessionId,
      accountId,
      channel: 'backend' as const,
      email,
      subject: 'Your code',
      digits: 6,
      expiresAt: Date.parse(sent.expiresAt),
      from: { email: 'no-reply@postcode.dev', name: 'postcode' },
    };
    const result = await runJobs([job]);
    expect(result.explicitAcks).toEqual(['msg-0-otp-retry']);
    expect(result.retryMessages).toEqual([]);
    const fresh = await codeFromInbox(email, 6, 2);
    // Every code mailed for a session stays valid until it expires: the retry adds one.
    const hashes = await runInDurableObject(sessionStub(sent.sessionId), (_instance, state) =>
      String(state.storage.sql.exec('SELECT code_hash FROM otp_sessions WHERE id = ?', sent.sessionId).one().code_hash),
    );
    expect(hashes.split(',')).toHaveLength(2);
    expect(first).toMatch(/^\d{6}$/);
    const request = { sessionId: sent.sessionId, email, code: fresh };
    expect(await verifyOtp(env, caller, request)).toMatchObject({ result: 'verified' });
  });

  it('a dead-lettered OTP retry is acked and nothing is sent', async () => {
    const body = {
      kind: 'otp-retry' as const,
      sessionId: 'otp_gone',
      accountId: 'acc_gone',
      channel: 'backend' as const,
      email: uniqueAddress('dlq-otp'),
      subject: 's',
      digits: 6,
      expiresAt: Date.now() + 60_000,
      from: { email: 'no-reply@postcode.dev', name: null },
    };
    const result = await runJobs([body], 6, 'postcode-mail-dlq');
    expect(result.explicitAcks).toEqual(['msg-0-otp-retry']);
    expect(await inbox(body.email)).toHaveLength(0);
  });
});

describe('dead-letter queue consumer', () => {
  it("acks and leaves a QUEUED email to its row: the account's alarm queues it again", async () => {
    const { accountId } = await newAccount();
    const to = uniqueAddress('tempfail-always');
    const id = await storedEmail(accountId, to);
    await runBatch([id]);
    const result = await runBatch([id], 6, 'postcode-mail-dlq');
    expect(result.explicitAcks).toEqual([`msg-0-${id}`]);
    expect(await findEmail(accountId, id)).toMatchObject({ status: 'QUEUED', attempts: 1 });
    expect(await inbox(to)).toHaveLength(0);
  });

  it('the row fails itself after MAIL_MAX_ATTEMPTS attempts, keeping the last reply', async () => {
    const { accountId } = await newAccount();
    const to = uniqueAddress('tempfail-always');
    const id = await storedEmail(accountId, to);
    const bindings = { ...env, MAIL_MAX_ATTEMPTS: '3' };
    for (const attempt of [1, 2]) {
      expect((await runBatch([id], attempt, 'postcode-mail', bindings)).retryMessages).toHaveLength(1);
      await makeDue(id);
    }
    const last = await runBatch([id], 3, 'postcode-mail', bindings);
    expect(last.explicitAcks).toEqual([`msg-0-${id}`]);
    const email = await findEmail(accountId, id);
    expect(email).toMatchObject({ status: 'FAILED', attempts: 3 });
    expect(email!.lastReply).toMatch(/451/);
    expect(await inbox(to)).toHaveLength(0);
  });

  it('leaves an email that was SENT in the meantime alone', async () => {
    const { accountId } = await newAccount();
    const id = await storedEmail(accountId, uniqueAddress('ok'));
    await runBatch([id]);
    await runBatch([id], 6, 'postcode-mail-dlq');
    expect(await findEmail(accountId, id)).toMatchObject({ status: 'SENT' });
  });
});

describe('retry delays', () => {
  it('grow with the attempt count and are capped', () => {
    const delays = [1, 2, 3, 4, 5, 6, 10].map((attempts) => retryDelaySeconds(attempts, 10));
    expect(delays).toEqual([10, 30, 90, 270, 810, 900, 900]);
  });
});
