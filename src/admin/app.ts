import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { asGatewayError, GatewayError, writeError } from '../errors.js';
import type { Limiter } from '../limits/index.js';
import type { UsageStore } from '../metering/index.js';
import { requestIdFor, type Logger, type Metrics } from '../observability/index.js';
import { requireAdmin } from './auth.js';
import { createAdminUsageHandler } from './usage.js';

export interface OperationsAppDeps {
  readonly config: Config;
  readonly authenticator: Authenticator;
  readonly limiter: Limiter;
  readonly usageStore: UsageStore;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly metricsHandler: (req: IncomingMessage, res: ServerResponse) => void;
  readonly isDraining: () => boolean;
  /** Anything that is not an operational endpoint: answered as a /v1 route would be (400/404/405). */
  readonly fallback: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * The Express app for everything outside /v1: liveness, readiness, metrics (unless they have
 * their own listener) and the admin API. Wrong methods answer 405 with `Allow: GET`.
 */
export function createOperationsApp(deps: OperationsAppDeps): Express {
  const { config, limiter } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.server.trustProxy);
  app.use(((req, res, next) => {
    // Every response carries a request id, not only proxied ones (clients log it on errors).
    res.setHeader('x-request-id', requestIdFor(req.headers['x-request-id']));
    if (deps.isDraining()) res.setHeader('connection', 'close');
    next();
  }) satisfies RequestHandler);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const draining = deps.isDraining();
    const ready = !draining && limiter.ready();
    // `store` tells operators (and tests) whether limits are shared or on the per-instance fallback.
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : draining ? 'draining' : 'store_unavailable',
      store: limiter.storeConnected() ? 'connected' : 'unavailable',
    });
  });
  const metricsPath = config.metrics.port === null ? [config.metrics.path] : [];
  for (const path of metricsPath) app.get(path, (req, res) => deps.metricsHandler(req, res));
  app.get('/admin/usage', requireAdmin(deps.authenticator, deps.metrics), createAdminUsageHandler(deps.usageStore));
  for (const path of ['/healthz', '/readyz', '/admin/usage', ...metricsPath]) {
    app.all(path, (req, _res, next) => {
      next(new GatewayError(405, 'method_not_allowed', `${req.method} is not allowed on ${path}; use GET.`, { allow: 'GET' }));
    });
  }

  app.use(((req, res) => deps.fallback(req, res)) satisfies RequestHandler);
  app.use(((err, req, res, _next) => {
    const error = asGatewayError(err);
    if (error.status === 500) deps.logger.error({ err, path: req.path }, 'unhandled error');
    writeError(res, error);
  }) satisfies ErrorRequestHandler);
  return app;
}
