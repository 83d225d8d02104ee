import type { Context } from 'hono';
import type { Credential } from '../auth/credential';
import { sha256Hex } from '../auth/crypto';
import type { GuardedEnv } from '../env';
import { ApiError } from '../errors';
import { accountStore } from '../store/account/client';
import { type IdempotencyRecord, KeyAlreadyUsed } from '../store/account/idempotency';
import type { EmailOwner } from '../store/account/schedule';

/** Visible ASCII, 1-255 characters (also the documented pattern of the header). */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7e]{1,255}$';
const KEY_FORMAT = new RegExp(IDEMPOTENCY_KEY_PATTERN);

type IdempotentContext = Context<GuardedEnv<Credential>>;

/** A request's key, for the accept that stores its response in the transaction that stores its emails. */
export type IdempotencyKey = { space: EmailOwner; key: string; requestHash: string };

function replay<C extends IdempotentContext, R extends Response>(c: C, key: IdempotencyKey, record: IdempotencyRecord) {
  if (record.requestHash !== key.requestHash) {
    throw new ApiError('IDEMPOTENCY_CONFLICT', 'Idempotency-Key: already used with a different request body');
  }
  return c.newResponse(record.responseBody ?? '', (record.responseStatus ?? 200) as 200, {
    'Content-Type': 'application/json',
    'Idempotent-Replayed': 'true',
  }) as R;
}

/**
 * `Idempotency-Key` (routes 1, 3, 4) around a route's handler, so it runs after validation: a key with a record
 * within 24 h gets the stored response again (another body: 409) and sends nothing; otherwise the handler runs
 * with `c.var.idempotencyKey`, and its accept stores the response under the key in the same transaction as the
 * emails, so of two requests with one key only one stores anything and the other answers the first's response.
 * Only successes are stored: a failed request leaves the key free to be retried once the problem is fixed.
 */
export function withIdempotency<C extends IdempotentContext, A extends unknown[], R extends Response>(
  handler: (c: C, ...rest: A) => R | Promise<R>,
) {
  return async (c: C, ...rest: A): Promise<R> => {
    const key = c.req.header('Idempotency-Key');
    if (key === undefined) return handler(c, ...rest);
    if (!KEY_FORMAT.test(key)) {
      throw new ApiError('INVALID_INPUT', 'Idempotency-Key: expected 1-255 visible ASCII characters');
    }
    const { credential } = c.var;
    const space = {
      accountId: credential.accountId,
      test: credential.kind === 'api_key' && credential.mode === 'test',
    };
    const requestHash = await sha256Hex(`${c.req.method} ${c.req.path}\n${c.var.jsonBody ?? ''}`);
    const idempotencyKey = { space, key, requestHash };
    const record = await accountStore(c.env, space.accountId).findIdempotencyRecord(space, key);
    if (record) return replay<C, R>(c, idempotencyKey, record);
    c.set('idempotencyKey', idempotencyKey);
    try {
      return await handler(c, ...rest);
    } catch (error) {
      if (error instanceof KeyAlreadyUsed) return replay<C, R>(c, idempotencyKey, error.record);
      throw error;
    }
  };
}
