import type { OpenAPIHono } from '@hono/zod-openapi';
import { Scalar } from '@scalar/hono-api-reference';
import scalarBundle from '../../vendor/scalar/standalone.js.gz';
import { anyone } from '../auth/guards';
import { config } from '../config';
import type { AppEnv } from '../env';
import { buildDocument } from '../openapi/document';
import { openApiDocument } from '../schemas/meta';
import { gzippedResponse } from './gzipped';
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

const SCRIPT_PATH = '/vendor/scalar/standalone.js';

const referenceScriptRoute = route({
  method: 'get',
  path: SCRIPT_PATH,
  tag: 'Service',
  summary: "The interactive reference's script",
  description: 'The Scalar API reference bundle that `/docs` loads (gzip-encoded when the client accepts gzip).',
  guard: anyone,
  success: {
    status: 200,
    description: 'JavaScript',
    content: { 'text/javascript': { schema: { type: 'string' } } },
  },
});

/** The bundle as the install gzipped it (scripts/vendor-docs.mjs). */
const referenceScript = (acceptEncoding: string | undefined) =>
  gzippedResponse(scalarBundle, acceptEncoding, {
    'Content-Type': 'text/javascript; charset=utf-8',
    'Cache-Control': 'public, max-age=3600',
  });

const reference = Scalar({
  url: '/api/v1/openapi.json',
  pageTitle: 'postcode API reference',
  // Served by this Worker (referenceScriptRoute), never from a CDN.
  cdn: SCRIPT_PATH,
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
    .openapi(referenceRoute, (c, next) => reference(c as never, next) as Promise<Response>)
    .openapi(referenceScriptRoute, (c) => referenceScript(c.req.header('Accept-Encoding')) as never);
}
