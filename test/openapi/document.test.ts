import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { OPERATIONS } from '../../src/openapi/operations';
import { call } from '../support/api';

type Document = ReturnType<typeof buildOpenApiDocument> & {
  paths: Record<string, Record<string, { responses: Record<string, unknown>; security: object[] }>>;
};

const registeredRoutes = () =>
  new Set(
    buildApp()
      .routes.filter((r) => r.method !== 'ALL')
      .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z]+)/g, '{$1}')}`),
  );

const documentedRoutes = (doc: Document) =>
  new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`)));

describe('GET /api/v1/openapi.json', () => {
  it('documents every registered route, and nothing else', async () => {
    const res = await call('GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.json as Document;
    expect(doc.openapi).toBe('3.1.0');
    expect([...documentedRoutes(doc)].sort()).toEqual([...registeredRoutes()].sort());
  });

  it('covers the 17 endpoints of the interface', () => {
    const documented = documentedRoutes(buildOpenApiDocument() as Document);
    const endpoints = [
      'POST /api/v1/emails', 'GET /api/v1/emails', 'POST /api/v1/templates/send', 'POST /api/v1/templates/send-test',
      'GET /api/v1/templates', 'GET /api/v1/templates/{templateId}', 'POST /api/v1/instant-otp/send',
      'POST /api/v1/instant-otp/verify', 'GET /api/v1/instant-otp/verifications', 'POST /api/v1/otp/send',
      'POST /api/v1/otp/verify', 'GET /api/v1/otp/verifications', 'POST /api/v1/backend-otp/send',
      'POST /api/v1/backend-otp/verify', 'GET /api/v1/backend-otp/verifications', 'POST /api/v1/email-verification/send',
      'POST /api/v1/email-verification/verify',
    ];
    for (const endpoint of endpoints) expect(documented.has(endpoint), endpoint).toBe(true);
  });

  it('declares the security schemes and applies them per route', () => {
    const doc = buildOpenApiDocument() as Document;
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminToken', 'apiKey', 'otpSecret', 'publicOtpToken']);
    expect(doc.paths['/api/v1/instant-otp/verifications']!.get!.security).toEqual([{ publicOtpToken: [], otpSecret: [] }]);
    expect(doc.paths['/api/v1/instant-otp/send']!.post!.security).toEqual([{ publicOtpToken: [] }, { apiKey: [] }]);
    expect(doc.paths['/admin/v1/settings']!.put!.security).toEqual([{ adminToken: [] }]);
  });

  it('lists the contract errors with the envelope', () => {
    const doc = buildOpenApiDocument() as Document;
    const responses = doc.paths['/api/v1/emails']!.post!.responses as Record<string, { content: Record<string, { examples: object }> }>;
    expect(Object.keys(responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503']);
    expect(Object.keys(responses['429']!.content['application/json']!.examples).sort()).toEqual(['DAILY_LIMIT_REACHED', 'RATE_LIMITED']);
  });
});

describe('examples in the document', () => {
  it('every example is valid for the schema it illustrates', () => {
    const withExamples = OPERATIONS.filter((o) => o.example);
    expect(withExamples.length).toBeGreaterThanOrEqual(15);
    for (const operation of withExamples) {
      const { request, response } = operation.example!;
      if (request !== undefined) {
        const parsed = operation.body!.safeParse(request);
        expect(parsed.success, `${operation.method} ${operation.path} request: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      }
      if ('schema' in operation.success) {
        const parsed = operation.success.schema.safeParse(response);
        expect(parsed.success, `${operation.method} ${operation.path} response: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      }
    }
  });
});

describe('GET /docs', () => {
  it('serves the interactive reference from this service, not a CDN', async () => {
    const res = await call('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toContain('text/html');
    expect(res.json).toContain('/api/v1/openapi.json');
    expect(res.json).toContain('src="/vendor/scalar/standalone.js"');
    expect(res.json).not.toMatch(/cdn\.jsdelivr|unpkg\.com/);
  });
});
