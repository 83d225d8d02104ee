import { OpenAPIHono } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import { config } from './config';
import type { AppEnv } from './env';
import { ApiError, errorBody } from './errors';
import { newId } from './ids';
import { declaredMethodsOnly } from './middleware/methods';
import { registerComponents } from './openapi/document';
import { adminRoutes } from './routes/admin';
import { adminAccountRoutes } from './routes/admin-accounts';
import { adminListRoutes } from './routes/admin-lists';
import { adminOtpTokenRoutes } from './routes/admin-otp-tokens';
import { backendOtpRoutes } from './routes/backend-otp';
import { dashboardRoutes } from './routes/dashboard';
import { docsRoutes } from './routes/docs';
import { domainRoutes } from './routes/domains';
import { emailVerificationRoutes } from './routes/email-verification';
import { emailRoutes } from './routes/emails';
import { inboundRoutes } from './routes/inbound';
import { inboundMessageRoutes } from './routes/inbound-messages';
import { instantOtpRoutes, otpCors } from './routes/instant-otp';
import { memberRoutes } from './routes/members';
import { metaRoutes } from './routes/meta';
import { metricsRoutes } from './routes/metrics';
import { sdkRoutes } from './routes/sdk';
import { sendLogRoutes } from './routes/send-log';
import { senderRoutes } from './routes/senders';
import { suppressionRoutes } from './routes/suppressions';
import { templateRoutes } from './routes/templates';
import { verifyPage, verifyPageRoutes } from './routes/verify-page';
import { webhookListenerRoutes } from './routes/webhook-listeners';
import { webhookRoutes } from './routes/webhooks';

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new ApiError('PAYLOAD_TOO_LARGE', 'body: too large');
    if (err.status < 500) return new ApiError('INVALID_INPUT', 'request: malformed');
  }
  return new ApiError('INTERNAL_ERROR', 'An unexpected error occurred');
}

/** The hosted page answers a browser with a page, also when something failed on our side. */
const wantsVerifyPage = (path: string, accept: string | undefined) =>
  path === '/verify' && !(accept ?? '').includes('application/json');

export function buildApp() {
  const app = new OpenAPIHono<AppEnv>();
  registerComponents(app);

  app.use(async (c, next) => {
    const requestId = newId('req');
    c.set('requestId', requestId);
    config(c.env); // invalid configuration: every request is a 500 naming the variable in the log
    await next();
    c.res.headers.set('X-Request-Id', requestId);
  });

  app.use('/api/v1/instant-otp/*', otpCors);
  app.use('/api/v1/otp/*', otpCors);
  // After CORS (preflight from any origin), before the routes: 405 for a method the path does not declare.
  app.use(declaredMethodsOnly(() => app.routes));

  for (const routes of [metaRoutes, verifyPageRoutes, emailRoutes, sendLogRoutes, templateRoutes, instantOtpRoutes])
    app.route('/', routes);
  for (const routes of [
    suppressionRoutes,
    webhookRoutes,
    webhookListenerRoutes,
    inboundRoutes,
    inboundMessageRoutes,
    backendOtpRoutes,
    emailVerificationRoutes,
    adminAccountRoutes,
    adminRoutes,
    adminOtpTokenRoutes,
  ])
    app.route('/', routes);
  app.route('/', domainRoutes);
  app.route('/', senderRoutes);
  app.route('/', adminListRoutes);
  app.route('/', memberRoutes);
  app.route('/', metricsRoutes);
  app.route('/', dashboardRoutes);
  app.route('/', sdkRoutes);
  app.route('/', docsRoutes(app));

  app.notFound((c) => c.json(errorBody(new ApiError('NOT_FOUND', 'No such route'), c.var.requestId), 404));

  app.onError((err, c) => {
    const apiError = toApiError(err);
    if (apiError.code === 'INTERNAL_ERROR') {
      console.error(`[${c.var.requestId}] ${c.req.method} ${c.req.path}:`, err instanceof Error ? err.stack : err);
    }
    c.header('X-Request-Id', c.var.requestId);
    if (apiError.code === 'INTERNAL_ERROR' && wantsVerifyPage(c.req.path, c.req.header('Accept'))) {
      return verifyPage(c, '', '', { kind: 'error' }, 500);
    }
    for (const [name, value] of Object.entries(apiError.extra.headers ?? {})) c.header(name, value);
    return c.json(errorBody(apiError, c.var.requestId), apiError.status);
  });

  return app;
}
