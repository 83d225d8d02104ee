// A verify consumes its session before the history row is written. When that write to the account's object
// fails, the caller still gets its success (it could not retry a consumed session) and the row reaches the
// object through the queue; the write is idempotent per session.
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import type { VerificationEntry } from '../../src/otp/session';
import type { MailJob } from '../../src/queue/jobs';
import { accountDb } from '../support/account-db';
import { call, eventually, expectError, newAccount, uniqueAddress } from '../support/api';
import { sendAndRead } from '../support/otp';

type Run = (accountId: string, operation: string, args: unknown[]) => Promise<unknown>;

/** The worker's bindings, except that every account object's `run` (each operation on its tables) goes through `wrap`. */
function bindingsWithAccountStore(wrap: (run: Run, operation: string) => Run): Cloudflare.Env {
  const namespace = new Proxy(env.ACCOUNT_STORE, {
    get(target, property) {
      if (property === 'get') {
        return (id: DurableObjectId) => {
          const stub = target.get(id);
          return new Proxy(stub, {
            get(stubTarget, name) {
              if (name !== 'run') return Reflect.get(stubTarget, name);
              return (accountId: string, operation: string, args: unknown[]) =>
                wrap((...call) => (stubTarget.run as unknown as Run)(...call), operation)(accountId, operation, args);
            },
          });
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...env, ACCOUNT_STORE: namespace };
}

/** The worker's bindings, except that the account's object refuses every write of verification history. */
const bindingsWithFailingHistory = (): Cloudflare.Env =>
  bindingsWithAccountStore((run, operation) =>
    operation === 'recordVerification' ? () => Promise.reject(new Error('simulated outage')) : run,
  );

/** The worker's bindings, except that every operation on the account's object (the history write is one) takes 400 ms longer. */
const bindingsWithSlowAccountStore = (): Cloudflare.Env =>
  bindingsWithAccountStore((run) => async (...call) => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    return run(...call);
  });

const historyRows = async (accountId: string, sessionId: string) =>
  (
    await accountDb(accountId)
      .prepare('SELECT session_id, email FROM otp_verifications WHERE session_id = ?')
      .bind(sessionId)
      .all()
  ).results;

describe('verification history is written after the verify has answered', () => {
  it('the verify does not wait for the history write, and the history route right after it reads its own verification', async () => {
    const { accountId, serverKey } = await newAccount();
    const email = uniqueAddress('history-after');
    const { sessionId, code } = await sendAndRead('/api/v1/backend-otp/send', serverKey, email);
    const bindings = bindingsWithSlowAccountStore();

    const res = await call('POST', '/api/v1/backend-otp/verify', {
      token: serverKey,
      body: { sessionId, email, code },
      bindings,
    });
    expect(res.json).toEqual({ success: true, data: { verified: true } });
    // Answered while the (slowed) history write is still under way.
    expect(await historyRows(accountId, sessionId)).toEqual([]);

    const history = await call<{ verifications: { email: string }[] }>('GET', '/api/v1/backend-otp/verifications', {
      token: serverKey,
      bindings,
    });
    expect(history.status).toBe(200);
    expect(history.json.data?.verifications.map((v) => v.email)).toEqual([email.toLowerCase()]);
  });
});

describe('verification history when its write fails during the verify', () => {
  it('the verify answers verified, the session is consumed, and the row arrives through the queue', async () => {
    const { accountId, serverKey } = await newAccount();
    const email = uniqueAddress('history-outage');
    const { sessionId, code } = await sendAndRead('/api/v1/backend-otp/send', serverKey, email);

    const res = await call('POST', '/api/v1/backend-otp/verify', {
      token: serverKey,
      body: { sessionId, email, code },
      bindings: bindingsWithFailingHistory(),
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toEqual({ success: true, data: { verified: true } });
    expect(await historyRows(accountId, sessionId)).toEqual([]);

    const rows = await eventually(async () => {
      const found = await historyRows(accountId, sessionId);
      return found.length > 0 ? found : undefined;
    }, 'the history row written by the queue consumer');
    expect(rows).toEqual([{ session_id: sessionId, email: email.toLowerCase() }]);
    expectError(
      await call('POST', '/api/v1/backend-otp/verify', { token: serverKey, body: { sessionId, email, code } }),
      404,
      'SESSION_NOT_FOUND',
    );
  });
});

describe('queue consumer: verification history jobs', () => {
  const entry = (accountId: string, sessionId: string): VerificationEntry => ({
    accountId,
    channel: 'backend',
    sessionId,
    email: 'ann@example.com',
    sentAt: '2026-11-22T10:00:00.000Z',
    verifiedAt: '2026-11-22T10:00:30.000Z',
  });

  async function runHistoryBatch(jobs: VerificationEntry[], bindings: Cloudflare.Env = env) {
    const batch = createMessageBatch<MailJob>(
      'postcode-mail',
      jobs.map((job, i) => ({
        id: `history-${i}`,
        timestamp: new Date(),
        attempts: 1,
        body: { kind: 'otp-history', entry: job },
      })),
    );
    const ctx = createExecutionContext();
    await worker.queue(batch, bindings);
    return getQueueResult(batch, ctx);
  }

  it('writes the row once, even when the job arrives twice', async () => {
    const { accountId } = await newAccount();
    const sessionId = `otp_${crypto.randomUUID().replace(/-/g, '').slice(0, 26)}`;
    const result = await runHistoryBatch([entry(accountId, sessionId), entry(accountId, sessionId)]);
    expect(result.explicitAcks.sort()).toEqual(['history-0', 'history-1']);
    expect(result.retryMessages).toEqual([]);
    expect(await historyRows(accountId, sessionId)).toHaveLength(1);
  });

  it('a failed write is retried, not acked (and needs no SMTP configuration)', async () => {
    const { accountId } = await newAccount();
    const sessionId = `otp_${crypto.randomUUID().replace(/-/g, '').slice(0, 26)}`;
    const bindings = { ...bindingsWithFailingHistory(), SMTP_HOST: '' };
    const result = await runHistoryBatch([entry(accountId, sessionId)], bindings);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(['history-0']);
    expect(await historyRows(accountId, sessionId)).toEqual([]);
  });
});
