// The parts of the OpenAPI document that are not per route: error responses by status, shared
// headers, security schemes and the document's head. Operations come from the route declarations.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { HeaderObject, LinkObject } from 'openapi3-ts/oas31';
import type { AppEnv } from '../env';
import { ERROR_STATUS, type ErrorCode } from '../errors';
import { errorEnvelope } from '../schemas/common';
import { registerWebhookEvents } from './webhooks';

const ERROR_EXAMPLES: Record<ErrorCode, string> = {
  INVALID_INPUT: 'to: expected an email address',
  INVALID_CODE: 'code: wrong code; 4 attempts left',
  UNAUTHORIZED: 'Authorization: unknown or revoked token',
  SCOPE_REQUIRED: 'This route needs an API key with scope mail_api',
  SENDER_NOT_VERIFIED:
    'from: ada@example.com is not a sender of this account, and example.com is not a verified domain',
  OTP_PUBLIC_IP_NOT_ALLOWED: 'This public token does not accept requests from your IP address',
  CHALLENGE_FAILED: 'turnstileToken: the bot check failed (invalid-input-response); nothing was sent',
  ADDRESS_NOT_ALLOWED: 'email: this site does not send codes to disposable-address domains',
  ROLE_REQUIRED: 'Your role (viewer) cannot do this',
  FORM_EXPIRED: 'This form has expired or did not come from this dashboard: reload the page and try again',
  NOT_FOUND: 'No such route',
  TEMPLATE_NOT_FOUND: 'templateId: no such template for this account',
  SESSION_NOT_FOUND: 'sessionId: no such session, or it has expired or been used',
  EMAIL_NOT_FOUND: 'emailId: no such email for this account',
  SUPPRESSION_NOT_FOUND: 'email: not on the suppression list of this account',
  WEBHOOK_NOT_FOUND: 'webhookId: no such webhook endpoint for this account',
  DELIVERY_NOT_FOUND: 'deliveryId: no such delivery for this endpoint',
  LISTENER_NOT_FOUND: 'listenerId: no such listening session waiting for its connection',
  INBOUND_ROUTE_NOT_FOUND: 'routeId: no such inbound route for this account',
  INBOUND_NOT_FOUND: 'inboundId: no such received message for this account',
  DOMAIN_NOT_FOUND: 'domainId: no such domain for this account',
  SENDER_NOT_FOUND: 'senderId: no such sender for this account',
  MEMBER_NOT_FOUND: 'memberId: no such member of this account',
  MEMBER_EXISTS: 'email: ada@example.com is a member already',
  LAST_OWNER: 'The account must keep an owner: make another member owner first',
  DOMAIN_TAKEN: 'example.com is verified by another account: it cannot be verified here',
  DOMAIN_NOT_VERIFIED: 'example.com does not sign yet (status pending): verify it before it receives mail',
  ACCOUNT_PLACED:
    "accountId: the account's data exists already (placed at 2026-11-21T22:41:00.000Z): its place is fixed",
  WEBHOOK_LIMIT_REACHED: 'An account has at most 20 webhook endpoints',
  INBOUND_ROUTE_EXISTS: 'pattern: support@acme.inbound.example has a route already; change that one',
  INBOUND_ROUTE_LIMIT_REACHED: 'An account has at most 100 inbound routes',
  EMAIL_NOT_CANCELABLE: 'emailId: only a SCHEDULED email can be canceled; this one is SENT',
  EMAIL_NOT_SCHEDULED: 'emailId: only a SCHEDULED email can be moved; this one is QUEUED',
  METHOD_NOT_ALLOWED: 'DELETE is not allowed on this path',
  IDEMPOTENCY_CONFLICT: 'Idempotency-Key: already used with a different request body',
  PAYLOAD_TOO_LARGE: 'body: larger than 524288 bytes',
  UNSUPPORTED_MEDIA_TYPE: 'Content-Type: expected application/json',
  UPGRADE_REQUIRED: 'Upgrade: this route takes a WebSocket connection (Upgrade: websocket)',
  RATE_LIMITED: 'Too many requests: slow down and retry after the time in Retry-After',
  OTP_RATE_LIMITED: 'Too many requests: slow down and retry after the time in Retry-After',
  DAILY_LIMIT_REACHED: 'The daily sending allowance is used up; it resets at resetAt (UTC midnight)',
  SMTP_NOT_CONFIGURED: 'Outbound SMTP is not configured on this service',
  INBOUND_NOT_CONFIGURED: 'Receiving on your own domains is not set up on this service (INBOUND_MX)',
  INTERNAL_ERROR: 'An unexpected error occurred',
};

const HEADERS = {
  'X-Request-Id': { description: 'Identifies this request in the service logs', schema: { type: 'string' } },
  'RateLimit-Limit': {
    description: 'Requests allowed in the window of the tightest bucket',
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': { description: 'Requests left in that window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until that window has room again', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying', required: true, schema: { type: 'integer' } },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
} as const satisfies Record<string, HeaderObject>;

type HeaderName = keyof typeof HEADERS;

export const headerRef = (name: string) => ({ $ref: `#/components/headers/${name as HeaderName}` });

/** `postApiV1TemplatesTemplateId` for POST /api/v1/templates/{templateId}; `getIndex` for GET /. */
export function operationId(method: string, path: string): string {
  if (path === '/') return `${method}Index`;
  const words = path
    .replace(/[{}]/g, '')
    .replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase());
  return `${method}${words}`;
}

/**
 * A response link to the operation `method path` (named by its operationId), its parameters or body fields
 * filled with runtime expressions such as `$response.body#/data/id` (the `{ success, data }` envelope included).
 * `security`: when only some of the source's ways in may follow the link, which (`x-security`, a subset of the
 * source's security requirements; a client holding another credential does not follow it).
 */
export const linkTo = (
  method: string,
  path: string,
  fill: {
    parameters?: Record<string, string>;
    requestBody?: Record<string, string>;
    security?: Record<string, string[]>[];
  },
): LinkObject => {
  const { security, ...filled } = fill;
  return { operationId: operationId(method, path), ...filled, ...(security ? { 'x-security': security } : {}) };
};

/** Links by name to several operations, each filling `parameter` from the same expression. */
export const linksFilling = (
  parameter: string,
  expression: string,
  targets: Record<string, [method: string, path: string]>,
): Record<string, LinkObject> =>
  Object.fromEntries(
    Object.entries(targets).map(([name, [method, path]]) => [
      name,
      linkTo(method, path, { parameters: { [parameter]: expression } }),
    ]),
  );

/** One response per status, listing its codes with the envelope and an example for each. */
export function errorResponses(codes: ErrorCode[], options: { rateLimitHeaders: boolean }) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set<ErrorCode>([...codes, 'INTERNAL_ERROR'])) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, statusCodes]) => [
      String(status),
      {
        description: statusCodes.join(', '),
        headers: {
          'X-Request-Id': headerRef('X-Request-Id'),
          ...(status === 429 ? { 'Retry-After': headerRef('Retry-After') } : {}),
          ...(status === 429 && options.rateLimitHeaders
            ? Object.fromEntries(
                ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((h) => [h, headerRef(h)]),
              )
            : {}),
        },
        content: {
          'application/json': {
            schema: errorEnvelope(statusCodes as [ErrorCode, ...ErrorCode[]]),
            examples: Object.fromEntries(
              statusCodes.map((code) => [
                code,
                {
                  value: {
                    success: false,
                    error: { code, message: ERROR_EXAMPLES[code], requestId: 'req_7dq2m4xkpa5wz3nhy6cb' },
                  },
                },
              ]),
            ),
          },
        },
      },
    ]),
  );
}

/** Components every operation refers to; registered once on the app. */
export function registerComponents(app: OpenAPIHono<AppEnv>) {
  const registry = app.openAPIRegistry;
  registry.registerComponent('securitySchemes', 'mailApiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key `pc_key_…` with scope mail_api',
  });
  registry.registerComponent('securitySchemes', 'serverOtpKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key `pc_key_…` with scope server_otp',
  });
  registry.registerComponent('securitySchemes', 'publicOtpToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'Public OTP token `pc_otp_…` (its IP allowlist applies to sends and history)',
  });
  registry.registerComponent('securitySchemes', 'otpSecret', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Otp-Secret',
    description: 'Analytics secret `pc_otp_sec_…` of the public token',
  });
  registry.registerComponent('securitySchemes', 'adminToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'The operator token (ADMIN_TOKEN)',
  });
  for (const [name, header] of Object.entries(HEADERS))
    registry.registerComponent('headers', name, header as HeaderObject);
  registerWebhookEvents(app);
}

/**
 * Every `pattern` of the document, its final `$` followed by `(?![\s\S])`: to ECMA-262 (JSON Schema's dialect)
 * that changes nothing, but Python's `re`, which fuzzers and validators built on Hypothesis or jsonschema use,
 * also matches `$` before a trailing newline, so `^[^\n]*$` would let `"Acme\n"` through as valid.
 */
function endPatterns<T>(node: T): T {
  if (Array.isArray(node)) return node.map(endPatterns) as T;
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === 'pattern' && typeof value === 'string' && /(?<!\\)\$$/.test(value)
        ? `${value}(?![\\s\\S])`
        : endPatterns(value),
    ]),
  ) as T;
}

export function buildDocument(app: OpenAPIHono<AppEnv>, serverUrl: string) {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'postcode',
      version: '1.0.0',
      description:
        "Transactional email and one-time codes. Every JSON response is `{ success, data }` or `{ success: false, error: { code, message, details?, requestId } }` and carries `X-Request-Id` (the same as `error.requestId`). A query parameter a route does not declare, or one given twice, is refused with 400 INVALID_INPUT naming it, as an unknown body field is; a method a path does not declare gets 405 METHOD_NOT_ALLOWED with that path's `Allow`.",
    },
    servers: [{ url: serverUrl, description: 'This service' }],
    tags: [
      { name: 'Service', description: 'Index, health and this document' },
      { name: 'Mail', description: 'Queue email and read the send log' },
      { name: 'Templates', description: 'Saved templates with {{vars}}, and sending from them' },
      {
        name: 'Domains',
        description: 'Sending domains: DNS records to publish, verification, DKIM signing and key rotation',
      },
      { name: 'Senders', description: 'Sender addresses an account confirms by mail' },
      { name: 'Webhooks', description: 'Signed event deliveries (Standard Webhooks) to your endpoints' },
      { name: 'Inbound', description: 'Receiving mail: the addresses an account receives at, and its routes' },
      { name: 'Suppressions', description: 'Addresses queued mail skips: added by permanent refusals, or by hand' },
      { name: 'Instant OTP', description: 'One-time codes straight from browsers (public token + IP allowlist)' },
      { name: 'Legacy OTP', description: 'Older aliases of the instant OTP routes' },
      { name: 'Backend OTP', description: 'One-time codes from a backend (server_otp key)' },
      { name: 'Email verification', description: 'Verification codes with a hosted verify page' },
      { name: 'Operator', description: 'Accounts, keys, tokens, senders and service settings (ADMIN_TOKEN)' },
    ],
  });
  return endPatterns(document);
}
