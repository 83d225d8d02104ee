import type { OpenAPIHono } from '@hono/zod-openapi';
import { Scalar } from '@scalar/hono-api-reference';
import { anyone } from '../auth/guards';
import { config } from '../config';
import type { AppEnv } from '../env';
import { buildDocument } from '../openapi/document';
import { openApiDocument } from '../schemas/meta';
import { json, route, router } from './route';

const documentRoute = route({
  method: 'get',
  path: '/api/v1/openapi.json',
  tag: 'Service',
  summary: 'This OpenAPI document',
  guard: anyone,
  success: { status: 200, description: 'An OpenAPI 3.1 document', content: json(openApiDocument) },
});

const referenceRoute = route({
  method: 'get',
  path: '/docs',
  tag: 'Service',
  summary: 'Interactive API reference',
  guard: anyone,
  success: { status: 200, description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
});

const reference = Scalar({
  url: '/api/v1/openapi.json',
  pageTitle: 'postcode API reference',
  // Served from this Worker's static assets (public/vendor), never from a CDN.
  cdn: '/vendor/scalar/standalone.js',
  withDefaultFonts: false,
  defaultOpenAllTags: true,
  // Only what works offline: no AI agent, MCP, deploy toolbar, developer tools or telemetry.
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  telemetry: false,
  ...{ showToolbar: 'never' },
});

/** The OpenAPI document of `app` (built once per isolate and base URL) and an interactive reference. */
export function docsRoutes(app: OpenAPIHono<AppEnv>) {
  let cached: { baseUrl: string; document: ReturnType<typeof buildDocument> } | undefined;
  return router()
    .openapi(documentRoute, (c) => {
      // The servers entry: PUBLIC_BASE_URL, or where this request came in when it is unset.
      const baseUrl = config(c.env).publicBaseUrl ?? new URL(c.req.url).origin;
      if (cached?.baseUrl !== baseUrl) cached = { baseUrl, document: buildDocument(app, baseUrl) };
      return c.json(cached.document as never, 200);
    })
    .openapi(referenceRoute, (c, next) => reference(c as never, next) as Promise<Response>);
}
