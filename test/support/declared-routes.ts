// The routes as declared (src/routes/route.ts), read from the OpenAPI document the declarations
// produce. Route-wide tests iterate over these, so a new route is covered the day it is declared.
import { buildApp } from '../../src/app';
import { buildDocument } from '../../src/openapi/document';
import type { TestAccount } from './api';

export type JsonSchema = {
  type?: string | string[];
  pattern?: string;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  minProperties?: number;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
};

type Parameter = { name: string; in: 'path' | 'query' | 'header'; schema: JsonSchema };

type Operation = {
  operationId: string;
  security: Record<string, string[]>[];
  /** The hosted page, opened from mailed links, ignores query parameters it does not read. */
  'x-unknown-query'?: 'ignored';
  parameters?: Parameter[];
  requestBody?: {
    'x-max-body-bytes'?: number;
    content: Record<string, { schema: JsonSchema; example?: Record<string, unknown> }>;
  };
  responses: Record<string, unknown>;
};

/** The credentials a test account holds, by what they are. */
export type CredentialKind = 'mail' | 'server' | 'public' | 'admin';

export type DeclaredRoute = {
  method: string;
  /** OpenAPI form, e.g. /api/v1/templates/{templateId} */
  path: string;
  name: string;
  operation: Operation;
  pathParams: string[];
  queryParams: string[];
  jsonBody?: { schema: JsonSchema; example: Record<string, unknown>; maxBytes: number };
};

export const document = () =>
  buildDocument(buildApp(), 'http://postcode.test') as unknown as { paths: Record<string, Record<string, Operation>> };

export function declaredRoutes(): DeclaredRoute[] {
  return Object.entries(document().paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => {
      const json = operation.requestBody?.content['application/json'];
      return {
        method: method.toUpperCase(),
        path,
        name: `${method.toUpperCase()} ${path}`,
        operation,
        pathParams: (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        ...(json
          ? {
              jsonBody: {
                schema: json.schema,
                example: json.example ?? {},
                maxBytes: operation.requestBody?.['x-max-body-bytes'] ?? 0,
              },
            }
          : {}),
      };
    }),
  );
}

/** Whether the route's security accepts this kind of credential (on its own, or with the OTP secret). */
export function accepts(route: DeclaredRoute, kind: CredentialKind): boolean {
  return route.operation.security.some((alternative) => {
    if (kind === 'admin') return 'adminToken' in alternative;
    if (kind === 'public') return 'publicOtpToken' in alternative;
    return (kind === 'mail' ? 'mailApiKey' : 'serverOtpKey') in alternative;
  });
}

/** Routes that need a credential. */
export const isGuarded = (route: DeclaredRoute) => route.operation.security.length > 0;

/** The route needs the public token's analytics secret beside it. */
export const needsOtpSecret = (route: DeclaredRoute) => route.operation.security.some((a) => 'otpSecret' in a);

export function tokenOf(account: TestAccount, kind: CredentialKind): string {
  return { mail: account.mailKey, server: account.serverKey, public: account.publicToken, admin: 'test-admin-token' }[
    kind
  ];
}

/** The kind of credential the route is called with in the happy path. */
export function credentialFor(route: DeclaredRoute): CredentialKind {
  const kinds: CredentialKind[] = ['mail', 'server', 'public', 'admin'];
  return kinds.find((kind) => accepts(route, kind))!;
}

/** The route's path with each `{param}` replaced. */
export const fillPath = (route: DeclaredRoute, value: (param: string) => string) =>
  route.path.replace(/\{([^}]+)\}/g, (_, param: string) => encodeURIComponent(value(param)));
