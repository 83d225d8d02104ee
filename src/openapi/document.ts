// Builds the OpenAPI 3.1 document from OPERATIONS: zod 4 converts each schema to JSON Schema.
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../errors';
import { errorEnvelope } from '../schemas/common';
import { OPERATIONS, type Operation } from './operations';

const ERROR_EXAMPLES: Partial<Record<ErrorCode, string>> = {
  INVALID_INPUT: 'to: expected an email address',
  INVALID_CODE: 'code: wrong code; 4 attempts left',
  UNAUTHORIZED: 'Authorization: unknown or revoked token',
  SCOPE_REQUIRED: 'This route needs an API key with scope mail_api',
  SENDER_NOT_VERIFIED: 'senderEmailId: not a verified sender of this account',
  OTP_PUBLIC_IP_NOT_ALLOWED: 'This public token does not accept requests from your IP address',
  NOT_FOUND: 'No such route',
  TEMPLATE_NOT_FOUND: 'templateId: no such template for this account',
  SESSION_NOT_FOUND: 'sessionId: no such session, or it has expired or been used',
  IDEMPOTENCY_CONFLICT: 'Idempotency-Key: already used with a different request body',
  PAYLOAD_TOO_LARGE: 'body: larger than 524288 bytes',
  UNSUPPORTED_MEDIA_TYPE: 'Content-Type: expected application/json',
  RATE_LIMITED: 'Too many requests: slow down and retry after the time in Retry-After',
  OTP_RATE_LIMITED: 'Too many requests: slow down and retry after the time in Retry-After',
  DAILY_LIMIT_REACHED: 'The daily sending allowance is used up; it resets at resetAt (UTC midnight)',
  SMTP_NOT_CONFIGURED: 'Outbound SMTP is not configured on this service',
  INTERNAL_ERROR: 'An unexpected error occurred',
};

const toSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  return json as Record<string, unknown>;
};

/** Query and path parameters from an object schema. */
function parameters(schema: z.ZodType | undefined, location: 'query' | 'path') {
  if (!schema) return [];
  const json = toSchema(schema, 'input') as { properties?: Record<string, object>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    schema: property,
  }));
}

function errorResponses(codes: ErrorCode[]) {
  const all: ErrorCode[] = [...new Set<ErrorCode>([...codes, 'INTERNAL_ERROR'])];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, statusCodes]) => [
      String(status),
      {
        description: statusCodes.join(', '),
        ...(status === 429 ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' } } } : {}),
        content: {
          'application/json': {
            schema: toSchema(errorEnvelope(statusCodes as [ErrorCode, ...ErrorCode[]]), 'output'),
            examples: Object.fromEntries(
              statusCodes.map((code) => [code, { value: { success: false, error: { code, message: ERROR_EXAMPLES[code] ?? code } } }]),
            ),
          },
        },
      },
    ]),
  );
}

function operationObject(operation: Operation) {
  const headerParameters = operation.idempotent
    ? [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 }, description: 'Replays the first response for 24 h' }]
    : [];
  const success = operation.success;
  return {
    tags: [operation.tag],
    summary: operation.summary,
    operationId: operation.path === '/' ? 'getIndex' : `${operation.method}${operation.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    security: operation.security.map((alternative) => Object.fromEntries(alternative.map((scheme) => [scheme, []]))),
    parameters: [...parameters(operation.params, 'path'), ...parameters(operation.query, 'query'), ...headerParameters],
    ...(operation.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: toSchema(operation.body, 'input'),
                ...(operation.example?.request ? { example: operation.example.request } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      [String(success.status)]:
        'schema' in success
          ? {
              description: 'Success',
              content: {
                'application/json': {
                  schema: toSchema(success.schema, 'output'),
                  ...(operation.example ? { example: operation.example.response } : {}),
                },
              },
            }
          : { description: success.description, content: { [success.contentType]: { schema: { type: success.contentType === 'application/json' ? 'object' : 'string' } } } },
      ...errorResponses(operation.errors),
    },
  };
}

export function buildOpenApiDocument(serverUrl?: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of OPERATIONS) {
    paths[operation.path] = { ...paths[operation.path], [operation.method]: operationObject(operation) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'postcode',
      version: '1.0.0',
      summary: 'Transactional email and one-time codes',
      description:
        'Every response is `{ success, data }` or `{ success: false, error: { code, message, details? } }` and carries `X-Request-Id`.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    tags: [...new Set(OPERATIONS.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key `pc_key_…` with scope mail_api or server_otp' },
        publicOtpToken: { type: 'http', scheme: 'bearer', description: 'Public OTP token `pc_otp_…` (IP allowlist applies)' },
        otpSecret: { type: 'apiKey', in: 'header', name: 'X-Otp-Secret', description: 'Analytics secret `pc_otp_sec_…` of the public token' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token (ADMIN_TOKEN)' },
      },
    },
  };
}
