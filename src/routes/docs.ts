import { Scalar } from '@scalar/hono-api-reference';
import { Hono } from 'hono';
import type { AppEnv } from '../env';
import { buildOpenApiDocument } from '../openapi/document';

let cached: { baseUrl: string; document: ReturnType<typeof buildOpenApiDocument> } | undefined;

/** The OpenAPI document (built once per isolate) and an interactive reference that needs no CDN. */
export const docsRoutes = new Hono<AppEnv>()
  .get('/api/v1/openapi.json', (c) => {
    if (cached?.baseUrl !== c.env.PUBLIC_BASE_URL) {
      cached = { baseUrl: c.env.PUBLIC_BASE_URL, document: buildOpenApiDocument(c.env.PUBLIC_BASE_URL) };
    }
    return c.json(cached.document);
  })
  .get(
    '/docs',
    Scalar({
      url: '/api/v1/openapi.json',
      pageTitle: 'postcode API reference',
      // Served from this Worker's static assets (public/vendor), never from a CDN.
      cdn: '/vendor/scalar/standalone.js',
      withDefaultFonts: false,
      defaultOpenAllTags: true,
    }),
  );
