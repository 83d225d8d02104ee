import { createMiddleware } from 'hono/factory';
import { sha256Hex } from '../auth/crypto';
import { abandonIdempotencyKey, claimIdempotencyKey, completeIdempotencyKey } from '../db/idempotency';
import type { AppEnv } from '../env';
import { ApiError } from '../errors';

const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` (routes 1, 3, 4), declared after body validation: the first request with a key
 * claims it; a retry with the same body gets the stored response again and sends nothing; another
 * body, or a retry while the first is still running, gets 409. Only successes are stored: a failed
 * request frees its key so the client can retry it once the problem is fixed.
 */
export const idempotent = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    const key = c.req.header('Idempotency-Key');
    if (key === undefined) return next();
    if (!KEY_FORMAT.test(key)) {
      throw new ApiError('INVALID_INPUT', 'Idempotency-Key: expected 1-255 visible ASCII characters');
    }
    const accountId = c.var.credential.accountId;
    const requestHash = await sha256Hex(`${c.req.method} ${c.req.path}\n${c.var.jsonBody ?? ''}`);
    const { claimed, claimId, record } = await claimIdempotencyKey(c.env.DB, accountId, key, requestHash);
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
      });
    }
    await next();
    if (c.res.status < 300 && !c.error) {
      await completeIdempotencyKey(c.env.DB, accountId, key, claimId, c.res.status, await c.res.clone().text());
    } else {
      await abandonIdempotencyKey(c.env.DB, accountId, key, claimId);
    }
  });
