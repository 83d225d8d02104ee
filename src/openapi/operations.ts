// Every operation the app serves, described with the same zod schemas the routes validate with.
// The OpenAPI document is generated from this table; tests check it against the registered routes.
import type { z } from 'zod';
import type { ErrorCode } from '../errors';
import * as admin from '../schemas/admin';
import * as emails from '../schemas/emails';
import * as meta from '../schemas/meta';
import * as otp from '../schemas/otp';
import * as templates from '../schemas/templates';

export type Security = 'apiKey' | 'publicOtpToken' | 'otpSecret' | 'adminToken';

export type Operation = {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI form: /api/v1/templates/{templateId} */
  path: string;
  tag: 'Mail' | 'Templates' | 'Instant OTP' | 'Legacy OTP' | 'Backend OTP' | 'Email verification' | 'Operator' | 'Service';
  summary: string;
  /** Alternatives; each entry lists the schemes that must all be present. */
  security: Security[][];
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  success: { status: 200 | 201; schema: z.ZodType } | { status: 200; contentType: 'text/html' | 'application/json'; description: string };
  errors: ErrorCode[];
  /** Routes that take an Idempotency-Key header. */
  idempotent?: boolean;
  /** A request body and a success response, shown in the reference. */
  example?: { request?: unknown; response: unknown };
};

const QUEUED = { success: true, data: { id: 'em_5kq2x7cu3ypmx4ndzv2a', status: 'QUEUED' } };
const OTP_SENT = {
  success: true,
  data: { sessionId: 'otp_5c1f0e9a7b3d42e8a6f0c4b2d9e17a3f8b6c0d5e2a9f4b7c1e3d6a8f0b2c4e6d_b3ghkq4mz2ytw6xrc7n5jd2pva', expiresAt: '2026-11-21T22:55:00.000Z', email: 'ada@example.com', sent: true },
};
const VERIFY = { request: { sessionId: 'otp_5c1f0e9a7b3d42e8a6f0c4b2d9e17a3f8b6c0d5e2a9f4b7c1e3d6a8f0b2c4e6d_b3ghkq4mz2ytw6xrc7n5jd2pva', email: 'ada@example.com', code: '042917' }, response: { success: true, data: { verified: true } } };
const HISTORY = {
  response: {
    success: true,
    data: { verifications: [{ id: 'ver_x2m4kq7fz3nwd5ty8hcb', email: 'ada@example.com', sentAt: '2026-11-21T22:45:00.000Z', verifiedAt: '2026-11-21T22:45:31.000Z' }] },
  },
};

const MAIL: Security[][] = [['apiKey']];
const SERVER_OTP: Security[][] = [['apiKey']];
const PUBLIC_OR_SERVER: Security[][] = [['publicOtpToken'], ['apiKey']];
const PUBLIC_WITH_SECRET: Security[][] = [['publicOtpToken', 'otpSecret']];
const ADMIN: Security[][] = [['adminToken']];

const AUTH: ErrorCode[] = ['UNAUTHORIZED', 'SCOPE_REQUIRED'];
const BODY: ErrorCode[] = ['INVALID_INPUT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
const SEND: ErrorCode[] = [...AUTH, 'RATE_LIMITED', ...BODY, 'SENDER_NOT_VERIFIED', 'IDEMPOTENCY_CONFLICT', 'SMTP_NOT_CONFIGURED'];
const OTP_SEND: ErrorCode[] = [...AUTH, ...BODY, 'SENDER_NOT_VERIFIED', 'SMTP_NOT_CONFIGURED'];
const OTP_VERIFY: ErrorCode[] = [...AUTH, ...BODY, 'INVALID_CODE', 'SESSION_NOT_FOUND', 'RATE_LIMITED'];
const ADMIN_ERRORS: ErrorCode[] = ['UNAUTHORIZED', 'NOT_FOUND'];

export const OPERATIONS: Operation[] = [
  // Service
  { method: 'get', path: '/', tag: 'Service', summary: 'Service index', security: [], success: { status: 200, schema: meta.indexResponse }, errors: [] },
  { method: 'get', path: '/health', tag: 'Service', summary: 'Health probe', security: [], success: { status: 200, schema: meta.healthResponse }, errors: [] },
  { method: 'get', path: '/api/v1/openapi.json', tag: 'Service', summary: 'This OpenAPI document', security: [], success: { status: 200, contentType: 'application/json', description: 'An OpenAPI 3.1 document' }, errors: [] },
  { method: 'get', path: '/docs', tag: 'Service', summary: 'Interactive API reference', security: [], success: { status: 200, contentType: 'text/html', description: 'An HTML page' }, errors: [] },

  // Mail (1, 2)
  { method: 'post', path: '/api/v1/emails', tag: 'Mail', example: { request: { to: ['ada@example.com'], subject: 'Your receipt', html: '<p>Thanks, {{name}}!</p>', text: 'Thanks, {{name}}!', vars: { name: 'Ada' }, priority: 'NORMAL' }, response: QUEUED }, summary: 'Queue an email (1)', security: MAIL, body: emails.queueEmailBody, success: { status: 200, schema: emails.queuedResponse }, errors: [...SEND, 'TEMPLATE_NOT_FOUND', 'DAILY_LIMIT_REACHED'], idempotent: true },
  { method: 'get', path: '/api/v1/emails', tag: 'Mail', example: { response: { success: true, data: { emails: [{ id: 'em_5kq2x7cu3ypmx4ndzv2a', subject: 'Your receipt', toAddresses: ['ada@example.com'], status: 'SENT', createdAt: '2026-11-21T22:45:00.000Z' }], total: 1, page: 1, totalPages: 1 } } }, summary: 'The send log (2)', security: MAIL, query: emails.pageQuery, success: { status: 200, schema: emails.emailListResponse }, errors: [...AUTH, 'RATE_LIMITED', 'INVALID_INPUT'] },

  // Templates (3-6, create/update/delete)
  { method: 'post', path: '/api/v1/templates/send', tag: 'Templates', example: { request: { to: 'ada@example.com', templateId: 'tpl_7d2kq4mxz3ncw5ty8hbe', vars: { name: 'Ada' } }, response: { success: true, data: { ...QUEUED.data, templateId: 'tpl_7d2kq4mxz3ncw5ty8hbe' } } }, summary: 'Send using a template (3)', security: MAIL, body: templates.templateSendBody, success: { status: 200, schema: templates.templateQueuedResponse }, errors: [...SEND, 'TEMPLATE_NOT_FOUND'], idempotent: true },
  { method: 'post', path: '/api/v1/templates/send-test', tag: 'Templates', example: { request: { to: 'ops@example.com' }, response: QUEUED }, summary: 'Send the account-health test email (4)', security: MAIL, body: templates.sendTestBody, success: { status: 200, schema: emails.queuedResponse }, errors: SEND, idempotent: true },
  { method: 'get', path: '/api/v1/templates', tag: 'Templates', summary: 'List templates (5)', security: MAIL, query: emails.pageQuery, success: { status: 200, schema: templates.templateListResponse }, errors: [...AUTH, 'RATE_LIMITED', 'INVALID_INPUT'] },
  { method: 'post', path: '/api/v1/templates', tag: 'Templates', example: { request: { name: 'welcome', subject: 'Welcome, {{name}}', htmlBody: '<p>Hello {{name}}</p>', textBody: 'Hello {{name}}' }, response: { success: true, data: { id: 'tpl_7d2kq4mxz3ncw5ty8hbe', name: 'welcome', subject: 'Welcome, {{name}}', htmlBody: '<p>Hello {{name}}</p>', textBody: 'Hello {{name}}', updatedAt: '2026-11-21T22:45:00.000Z' } } }, summary: 'Create a template', security: MAIL, body: templates.createTemplateBody, success: { status: 201, schema: templates.templateCreatedResponse }, errors: [...AUTH, 'RATE_LIMITED', ...BODY] },
  { method: 'get', path: '/api/v1/templates/{templateId}', tag: 'Templates', summary: 'Get a template (6)', security: MAIL, params: templates.templateIdParam, success: { status: 200, schema: templates.templateResponse }, errors: [...AUTH, 'RATE_LIMITED', 'INVALID_INPUT', 'TEMPLATE_NOT_FOUND'] },
  { method: 'put', path: '/api/v1/templates/{templateId}', tag: 'Templates', summary: 'Update a template', security: MAIL, params: templates.templateIdParam, body: templates.updateTemplateBody, success: { status: 200, schema: templates.templateCreatedResponse }, errors: [...AUTH, 'RATE_LIMITED', ...BODY, 'TEMPLATE_NOT_FOUND'] },
  { method: 'delete', path: '/api/v1/templates/{templateId}', tag: 'Templates', summary: 'Delete a template', security: MAIL, params: templates.templateIdParam, success: { status: 200, schema: templates.templateDeletedResponse }, errors: [...AUTH, 'RATE_LIMITED', 'INVALID_INPUT', 'TEMPLATE_NOT_FOUND'] },

  // Instant OTP (7-9) and its legacy aliases (10-12)
  { method: 'post', path: '/api/v1/instant-otp/send', tag: 'Instant OTP', example: { request: { email: 'ada@example.com', otpDigits: 6, expiresInSeconds: 600 }, response: OTP_SENT }, summary: 'Send an instant OTP (7)', security: PUBLIC_OR_SERVER, body: otp.instantSendBody, success: { status: 200, schema: otp.instantSendResponse }, errors: [...OTP_SEND, 'OTP_PUBLIC_IP_NOT_ALLOWED', 'OTP_RATE_LIMITED'] },
  { method: 'post', path: '/api/v1/instant-otp/verify', tag: 'Instant OTP', example: VERIFY, summary: 'Verify an instant OTP (8)', security: PUBLIC_OR_SERVER, body: otp.verifyBody, success: { status: 200, schema: otp.verifyResponse }, errors: OTP_VERIFY },
  { method: 'get', path: '/api/v1/instant-otp/verifications', tag: 'Instant OTP', example: HISTORY, summary: 'Instant OTP verification history (9)', security: PUBLIC_WITH_SECRET, query: otp.historyQuery, success: { status: 200, schema: otp.historyResponse }, errors: [...AUTH, 'OTP_PUBLIC_IP_NOT_ALLOWED', 'RATE_LIMITED'] },
  { method: 'post', path: '/api/v1/otp/send', tag: 'Legacy OTP', summary: 'Legacy alias of instant OTP send (10)', security: PUBLIC_OR_SERVER, body: otp.legacySendBody, success: { status: 200, schema: otp.legacySendResponse }, errors: [...OTP_SEND, 'OTP_PUBLIC_IP_NOT_ALLOWED', 'OTP_RATE_LIMITED'] },
  { method: 'post', path: '/api/v1/otp/verify', tag: 'Legacy OTP', summary: 'Legacy alias of instant OTP verify (11)', security: PUBLIC_OR_SERVER, body: otp.verifyBody, success: { status: 200, schema: otp.verifyResponse }, errors: OTP_VERIFY },
  { method: 'get', path: '/api/v1/otp/verifications', tag: 'Legacy OTP', summary: 'Legacy alias of the instant OTP history (12)', security: PUBLIC_WITH_SECRET, query: otp.historyQuery, success: { status: 200, schema: otp.legacyHistoryResponse }, errors: [...AUTH, 'OTP_PUBLIC_IP_NOT_ALLOWED', 'RATE_LIMITED'] },

  // Backend OTP (13-15)
  { method: 'post', path: '/api/v1/backend-otp/send', tag: 'Backend OTP', example: { request: { email: 'ada@example.com', subject: 'Your sign-in code', verificationLine: 'Sign in with this code:' }, response: OTP_SENT }, summary: 'Send a backend OTP (13)', security: SERVER_OTP, body: otp.serverSendBody, success: { status: 200, schema: otp.instantSendResponse }, errors: [...OTP_SEND, 'RATE_LIMITED'] },
  { method: 'post', path: '/api/v1/backend-otp/verify', tag: 'Backend OTP', example: VERIFY, summary: 'Verify a backend OTP (14)', security: SERVER_OTP, body: otp.verifyBody, success: { status: 200, schema: otp.verifyResponse }, errors: OTP_VERIFY },
  { method: 'get', path: '/api/v1/backend-otp/verifications', tag: 'Backend OTP', example: HISTORY, summary: 'Backend OTP verification history (15)', security: SERVER_OTP, query: otp.historyQuery, success: { status: 200, schema: otp.historyResponse }, errors: [...AUTH, 'RATE_LIMITED'] },

  // Email verification (16, 17, status) and the hosted page
  { method: 'post', path: '/api/v1/email-verification/send', tag: 'Email verification', example: { request: { email: 'ada@example.com' }, response: { success: true, data: { ...OTP_SENT.data, hostedVerifyUrl: 'https://verify.example.com/verify?sessionId=otp_5c1f0e9a7b3d42e8a6f0c4b2d9e17a3f8b6c0d5e2a9f4b7c1e3d6a8f0b2c4e6d_b3ghkq4mz2ytw6xrc7n5jd2pva' } } }, summary: 'Send an email verification code (16)', security: SERVER_OTP, body: otp.serverSendBody, success: { status: 200, schema: otp.emailVerificationSendResponse }, errors: [...OTP_SEND, 'RATE_LIMITED'] },
  { method: 'post', path: '/api/v1/email-verification/verify', tag: 'Email verification', example: VERIFY, summary: 'Verify an email verification code (17)', security: SERVER_OTP, body: otp.verifyBody, success: { status: 200, schema: otp.verifyResponse }, errors: OTP_VERIFY },
  { method: 'get', path: '/api/v1/email-verification/{sessionId}', tag: 'Email verification', example: { response: { success: true, data: { sessionId: 'otp_5c1f0e9a7b3d42e8a6f0c4b2d9e17a3f8b6c0d5e2a9f4b7c1e3d6a8f0b2c4e6d_b3ghkq4mz2ytw6xrc7n5jd2pva', email: 'ada@example.com', status: 'verified', expiresAt: '2026-11-21T22:55:00.000Z', verifiedAt: '2026-11-21T22:46:02.000Z' } } }, summary: 'Outcome of an email verification', security: SERVER_OTP, params: otp.sessionIdParam, success: { status: 200, schema: otp.verificationStatusResponse }, errors: [...AUTH, 'RATE_LIMITED', 'INVALID_INPUT', 'SESSION_NOT_FOUND'] },
  { method: 'get', path: '/verify', tag: 'Email verification', summary: 'The hosted verify page (HTML)', security: [], query: otp.verifyPageQuery, success: { status: 200, contentType: 'text/html', description: 'The verify form, or the state of the session' }, errors: [] },
  { method: 'post', path: '/verify', tag: 'Email verification', summary: 'Submit the hosted verify form (HTML, or JSON with Accept: application/json)', security: [], success: { status: 200, contentType: 'text/html', description: 'The page showing the result' }, errors: ['PAYLOAD_TOO_LARGE'] },

  // Operator API
  { method: 'post', path: '/admin/v1/accounts', tag: 'Operator', summary: 'Create an account', security: ADMIN, body: admin.createAccountBody, success: { status: 201, schema: admin.accountResponse }, errors: [...ADMIN_ERRORS, ...BODY] },
  { method: 'post', path: '/admin/v1/accounts/{accountId}/api-keys', tag: 'Operator', example: { request: { scopes: ['mail_api'], name: 'backend' }, response: { success: true, data: { id: 'key_q3w7zk2mx4ncd5ty8hbe', key: 'pc_key_n4q7zk2mx3bcd5ty8hwe6rjp2gkfm3vx', scopes: ['mail_api'] } } }, summary: 'Issue an API key (shown once)', security: ADMIN, params: admin.accountIdParam, body: admin.createApiKeyBody, success: { status: 201, schema: admin.apiKeyCreatedResponse }, errors: [...ADMIN_ERRORS, ...BODY] },
  { method: 'delete', path: '/admin/v1/api-keys/{keyId}', tag: 'Operator', summary: 'Revoke an API key', security: ADMIN, params: admin.keyIdParam, success: { status: 200, schema: admin.apiKeyRevokedResponse }, errors: [...ADMIN_ERRORS, 'INVALID_INPUT'] },
  { method: 'post', path: '/admin/v1/accounts/{accountId}/otp-tokens', tag: 'Operator', summary: 'Issue a public OTP token and its analytics secret', security: ADMIN, params: admin.accountIdParam, body: admin.createOtpTokenBody, success: { status: 201, schema: admin.otpTokenCreatedResponse }, errors: [...ADMIN_ERRORS, ...BODY] },
  { method: 'post', path: '/admin/v1/accounts/{accountId}/senders', tag: 'Operator', summary: 'Add a verified sender identity', security: ADMIN, params: admin.accountIdParam, body: admin.createSenderBody, success: { status: 201, schema: admin.senderResponse }, errors: [...ADMIN_ERRORS, ...BODY] },
  { method: 'get', path: '/admin/v1/settings', tag: 'Operator', summary: 'Read the service settings', security: ADMIN, success: { status: 200, schema: admin.settingsResponse }, errors: ADMIN_ERRORS },
  { method: 'put', path: '/admin/v1/settings', tag: 'Operator', summary: 'Freeze mode and the daily warm-up allowance', security: ADMIN, body: admin.updateSettingsBody, success: { status: 200, schema: admin.settingsResponse }, errors: [...ADMIN_ERRORS, ...BODY] },
];
