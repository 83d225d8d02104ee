import { z } from '@hono/zod-openapi';
import { envelope } from './common';

export const indexResponse = envelope(
  z.object({
    service: z.literal('postcode'),
    description: z.string(),
    version: z.string(),
    api: z.string(),
    openapi: z.string(),
    docs: z.string(),
    health: z.string(),
  }),
);
export const healthResponse = envelope(z.object({ status: z.literal('ok') }));

/** GET /api/v1/openapi.json: the parts a client reads; the rest is any OpenAPI 3.1 content. */
export const openApiDocument = z
  .object({
    openapi: z.literal('3.1.0'),
    info: z.object({ title: z.string(), version: z.string() }).loose(),
    paths: z.record(z.string(), z.record(z.string(), z.unknown())),
    components: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();
