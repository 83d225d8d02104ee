import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from './env';
import { ApiError, errorBody } from './errors';
import { newId } from './ids';
import { adminRoutes } from './routes/admin';
import { backendOtpRoutes } from './routes/backend-otp';
import { docsRoutes } from './routes/docs';
import { emailVerificationRoutes } from './routes/email-verification';
import { instantOtpRoutes, legacyOtpRoutes, otpCors } from './routes/instant-otp';
import { verifyPageRoutes } from './routes/verify-page';
import { emailRoutes } from './routes/emails';
import { metaRoutes } from './routes/meta';
import { templateRoutes } from './routes/templates';

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new ApiError('PAYLOAD_TOO_LARGE', 'body: too large');
    if (err.status < 500) return new ApiError('INVALID_INPUT', 'request: malformed');
  }
  return new ApiError('INTERNAL_ERROR', 'An unexpected error occurred');
}

/** Patterns of every registered route, to tell 405 (known path, other method) from 404. */
function methodsForPath(app: Hono<AppEnv>, path: string): string[] {
  return app.routes
    .filter((r) => r.method !== 'ALL')
    .filter((r) => {
      const pattern = r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\/:[^/]+/g, '/[^/]+');
      return new RegExp(`^${pattern}$`).test(path);
    })
    .map((r) => r.method);
}

export function buildApp() {
  const app = new Hono<AppEnv>();

  app.use(async (c, next) => {
    const requestId = newId('req');
    c.set('requestId', requestId);
    await next();
    c.res.headers.set('X-Request-Id', requestId);
  });

  app.use('/api/v1/instant-otp/*', otpCors);
  app.use('/api/v1/otp/*', otpCors);

  app.route('/', metaRoutes);
  app.route('/', verifyPageRoutes);
  app.route('/', docsRoutes);
  app.route('/api/v1/emails', emailRoutes);
  app.route('/api/v1/templates', templateRoutes);
  app.route('/api/v1/instant-otp', instantOtpRoutes);
  app.route('/api/v1/otp', legacyOtpRoutes);
  app.route('/api/v1/backend-otp', backendOtpRoutes);
  app.route('/api/v1/email-verification', emailVerificationRoutes);
  app.route('/admin/v1', adminRoutes);

  app.notFound((c) => {
    const allowed = methodsForPath(app, c.req.path);
    if (allowed.length > 0) {
      c.header('Allow', [...new Set(allowed)].join(', '));
      return c.json(errorBody(new ApiError('METHOD_NOT_ALLOWED', `${c.req.method} is not allowed on this path`)), 405);
    }
    return c.json(errorBody(new ApiError('NOT_FOUND', 'No such route')), 404);
  });

  app.onError((err, c) => {
    const apiError = toApiError(err);
    if (apiError.code === 'INTERNAL_ERROR') {
      console.error(`[${c.var.requestId}] ${c.req.method} ${c.req.path}:`, err instanceof Error ? err.stack : err);
    }
    for (const [name, value] of Object.entries(apiError.extra.headers ?? {})) c.header(name, value);
    c.header('X-Request-Id', c.var.requestId);
    return c.json(errorBody(apiError), apiError.status);
  });

  return app;
}
