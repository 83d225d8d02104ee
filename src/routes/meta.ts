import { Hono } from 'hono';
import type { AppEnv } from '../env';

/** Unauthenticated routes: a small index so a person can see the service is up, and a health probe. */
export const metaRoutes = new Hono<AppEnv>()
  .get('/', (c) =>
    c.json({
      success: true,
      data: {
        service: 'postcode',
        description: 'Transactional email and one-time codes',
        version: 'v1',
        api: '/api/v1',
        openapi: '/api/v1/openapi.json',
        docs: '/docs',
        health: '/health',
      },
    }),
  )
  .get('/health', (c) => c.json({ success: true, data: { status: 'ok' } }));
