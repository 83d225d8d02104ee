import { anyone } from '../auth/guards';
import { healthResponse, indexResponse } from '../schemas/meta';
import { json, ok, route, router } from './route';

const INDEX = {
  service: 'postcode' as const,
  description: 'Transactional email and one-time codes',
  version: 'v1',
  api: '/api/v1',
  openapi: '/api/v1/openapi.json',
  docs: '/docs',
  health: '/health',
};

const index = route({
  method: 'get',
  path: '/',
  tag: 'Service',
  summary: 'Service index',
  guard: anyone,
  success: { status: 200, content: json(indexResponse, { success: true, data: INDEX }) },
});

const health = route({
  method: 'get',
  path: '/health',
  tag: 'Service',
  summary: 'Health probe',
  guard: anyone,
  success: { status: 200, content: json(healthResponse, { success: true, data: { status: 'ok' } }) },
});

/** Unauthenticated routes: a small index so a person can see the service is up, and a health probe. */
export const metaRoutes = router()
  .openapi(index, (c) => ok(c, INDEX))
  .openapi(health, (c) => ok(c, { status: 'ok' as const }));
