import type { Context } from 'hono';
import type { Credential } from '../auth/credential';
import { sha256Hex } from '../auth/crypto';
import type { GuardedEnv } from '../env';
import { ApiError } from '../errors';
import { accountStore } from '../store/account/client';

/** Visible ASCII, 1-255 characters (also the documented pattern of the header). */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7e]{1,255}$';
const KEY_FORMAT = new RegExp(IDEMPOTENCY_KEY_PATTERN);

type IdempotentContext = Context<GuardedEnv<Credential>>;

/**
 * `Idempotency-Key` (routes 1, 3, 4) around a route's handler, so it runs after validation: the
 * first request with a key claims it; a retry with the same body gets the stored response again and
 * sends nothing; another body, or a retry while the first is still running, gets 409. Only
 * successes are stored: a failed request frees its key so the client can retry it once the problem
 * is fixed.
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
    const store = accountStore(c.env, credential.accountId);
    const { claimed, claimId, record } = await store.claimIdempotencyKey(space, key, requestHash);
    if (!claimed) {
      if (record.requestHash !== requestHash) {
        throw new ApiError('IDEMPOTENCY_CONFLICT', 'Idempotency-Key: already used with a different request body');
      }
      if (record.responseStatus === null || record.responseBody === null) {
        throw new ApiError('IDEMPOTENCY_CONFLICT', 'Idempotency-Key: the first request with this key is still running');
      }
      return c.newResponse(record.responseBody, record.responseStatus as 200, {
        'Content-Type': 'application/json',
        'Idempotent-Replayed': 'true',
      }) as R;
    }
    let response: R;
    try {
      response = await handler(c, ...rest);
    } catch (error) {
      await store.abandonIdempotencyKey(space, key, claimId);
      throw error;
    }
    if (response.status < 300) {
      await store.completeIdempotencyKey(space, key, claimId, response.status, await response.clone().text());
    } else {
      await store.abandonIdempotencyKey(space, key, claimId);
    }
    return response;
  };
}
