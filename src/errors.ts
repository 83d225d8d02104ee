import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** Every error code the API can answer with, mapped to its HTTP status (one table for the whole service). */
export const ERROR_STATUS = {
  INVALID_INPUT: 400,
  INVALID_CODE: 400,
  UNAUTHORIZED: 401,
  SCOPE_REQUIRED: 403,
  SENDER_NOT_VERIFIED: 403,
  OTP_PUBLIC_IP_NOT_ALLOWED: 403,
  CHALLENGE_FAILED: 403,
  ADDRESS_NOT_ALLOWED: 403,
  ROLE_REQUIRED: 403,
  FORM_EXPIRED: 403,
  NOT_FOUND: 404,
  TEMPLATE_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  EMAIL_NOT_FOUND: 404,
  SUPPRESSION_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  DELIVERY_NOT_FOUND: 404,
  LISTENER_NOT_FOUND: 404,
  INBOUND_ROUTE_NOT_FOUND: 404,
  INBOUND_NOT_FOUND: 404,
  DOMAIN_NOT_FOUND: 404,
  SENDER_NOT_FOUND: 404,
  MEMBER_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_CONFLICT: 409,
  WEBHOOK_LIMIT_REACHED: 409,
  INBOUND_ROUTE_EXISTS: 409,
  INBOUND_ROUTE_LIMIT_REACHED: 409,
  EMAIL_NOT_CANCELABLE: 409,
  EMAIL_NOT_SCHEDULED: 409,
  DOMAIN_TAKEN: 409,
  DOMAIN_NOT_VERIFIED: 409,
  ACCOUNT_PLACED: 409,
  MEMBER_EXISTS: 409,
  LAST_OWNER: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UPGRADE_REQUIRED: 426,
  RATE_LIMITED: 429,
  OTP_RATE_LIMITED: 429,
  DAILY_LIMIT_REACHED: 429,
  INTERNAL_ERROR: 500,
  SMTP_NOT_CONFIGURED: 503,
  INBOUND_NOT_CONFIGURED: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export type ErrorDetail = { path: string; message: string };

export class ApiError extends Error {
  readonly status: ContentfulStatusCode;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: {
      details?: ErrorDetail[];
      resetAt?: string;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

/**
 * The error envelope; `requestId` is the answer's `X-Request-Id`, so that one line of it can be quoted. An answer
 * with `Retry-After` repeats its seconds as `retryAfterSeconds`, for a script that cannot read the header.
 */
export function errorBody(err: ApiError, requestId: string) {
  const retryAfter = err.extra.headers?.['Retry-After'];
  return {
    success: false as const,
    error: {
      code: err.code,
      message: err.message,
      ...(err.extra.details ? { details: err.extra.details } : {}),
      ...(err.extra.resetAt ? { resetAt: err.extra.resetAt } : {}),
      ...(retryAfter ? { retryAfterSeconds: Number(retryAfter) } : {}),
      requestId,
    },
  };
}
