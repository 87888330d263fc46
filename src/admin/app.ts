import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { AuthFailureLimit, Authenticator, KeyAdmin } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { asGatewayError, GatewayError, writeError } from '../errors.js';
import type { Limiter } from '../limits/index.js';
import type { Ledger } from '../metering/index.js';
import { requestIdFor, type Logger, type Metrics } from '../observability/index.js';
import type { StoreHandle } from '../store/index.js';
import { AuditTrail, listAuditHandler } from './audit.js';
import { requireAdmin } from './auth.js';
import { keyRoutes } from './keys.js';
import { resourceRoutes } from './resources.js';
import type { OwnershipRegistry } from '../ownership/index.js';
import { malformedPathEncoding } from '../proxy/index.js';
import { invalidRequest } from './request.js';
import { ledgerRowsHandler, usageHandler } from './usage.js';

/** What a reload answers (SPEC 12.2). */
export interface ReloadResult {
  readonly status: 'reloaded';
  readonly changed: readonly string[];
  readonly restartRequired: readonly string[];
}

/** The parts of the running configuration the operations app reads on every request (they change on reload). */
export interface CurrentConfig {
  readonly config: Config;
  readonly authenticator: Authenticator;
  readonly metricsHandler: (req: IncomingMessage, res: ServerResponse) => void;
}

export interface OperationsAppDeps {
  readonly current: () => CurrentConfig;
  readonly limiter: Limiter;
  /** Bad-credential counts per client address, shared with /v1 (SPEC 15). */
  readonly authFailureLimit: AuthFailureLimit;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly handle: StoreHandle;
  readonly ledger: Ledger;
  readonly keys: KeyAdmin;
  readonly ownership: OwnershipRegistry;
  readonly trail: AuditTrail;
  /** Re-reads and applies the config file; rejects with 400 invalid_config (nothing changed) when it is not valid. */
  readonly reload: (actor: string, requestId: string) => Promise<ReloadResult>;
  readonly isDraining: () => boolean;
  /** Where the exposition is served on this listener (null: `metrics.port` has its own). Fixed at start. */
  readonly metricsPath: string | null;
  /** Anything that is not an operational endpoint: answered as a /v1 route would be (400/404/405). */
  readonly fallback: (req: IncomingMessage, res: ServerResponse) => void;
}

/** The operational paths and their methods: a wrong method answers 405 with `Allow`. */
function knownPaths(metricsPath: string | null): Array<[string, string[]]> {
  return [
    ['/healthz', ['GET']],
    ['/readyz', ['GET']],
    ...(metricsPath === null ? [] : ([[metricsPath, ['GET']]] as Array<[string, string[]]>)),
    ['/admin/usage', ['GET']],
    ['/admin/usage/requests', ['GET']],
    ['/admin/keys', ['GET', 'POST']],
    ['/admin/keys/:id', ['GET', 'PATCH', 'DELETE']],
    ['/admin/keys/:id/rotate', ['POST']],
    ['/admin/audit', ['GET']],
    ['/admin/resources', ['GET']],
    ['/admin/resources/:kind/:id', ['PUT', 'DELETE']],
    ['/admin/config/reload', ['POST']],
  ];
}

/**
 * Client errors raised inside Express rather than by our handlers — the router's path-parameter
 * decoding (a URIError marked 400, thrown before any auth runs) and body-parser's failures —
 * as the 4xx they are. Left to asGatewayError they would be 500s with a stack in the log, which
 * anyone could trigger without a key.
 */
function expressClientError(err: unknown): GatewayError | undefined {
  if (err instanceof GatewayError) return err;
  const { status, type, code } = (err ?? {}) as { status?: unknown; type?: unknown; code?: unknown };
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  if (err instanceof URIError) return malformedPathEncoding();
  if (type === 'entity.parse.failed') return invalidRequest('body', 'The body is not valid JSON.');
  if (type === 'entity.too.large') return new GatewayError(413, 'request_too_large', 'The body exceeds the limit of 64 KB for admin requests.');
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') return invalidRequest('body', 'The body must be UTF-8 JSON.');
  if (typeof code === 'string' && code.startsWith('Z_')) return invalidRequest('body', 'The body could not be decoded (content-encoding).');
  return new GatewayError(status, 'invalid_request', 'The body could not be read as sent (length or encoding).', {}, 'body');
}

/**
 * The Express app for everything outside /v1: liveness, readiness, metrics (unless they have
 * their own listener) and the admin API (usage, keys, audit, config reload).
 */
export function createOperationsApp(deps: OperationsAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', () => deps.current().config.server.trustProxy);
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
    const ready = !draining && deps.limiter.ready();
    // `store` says whether limits are shared or on the per-instance fallback; `database` whether
    // the last database call got through, so keys and ownership are fresh (requests are served
    // from memory either way, so neither makes the instance unready).
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : draining ? 'draining' : 'store_unavailable',
      store: deps.limiter.storeConnected() ? 'connected' : 'unavailable',
      database: deps.handle.current?.reachable ? 'connected' : 'unavailable',
    });
  });
  if (deps.metricsPath !== null) app.get(deps.metricsPath, (req, res) => deps.current().metricsHandler(req, res));

  // Known paths answer a wrong method with 405 before anything else, like the /v1 routes (no key needed to learn that).
  for (const [path, methods] of knownPaths(deps.metricsPath)) {
    app.all(path, (req, _res, next) => {
      if (methods.includes(req.method)) return next();
      const allow = methods.join(', ');
      next(new GatewayError(405, 'method_not_allowed', `${req.method} is not allowed on ${path}; use ${allow}.`, { allow }));
    });
  }
  const admin = requireAdmin(deps.current, deps.authFailureLimit, deps.metrics);
  for (const [path] of knownPaths(null)) if (path.startsWith('/admin/')) app.all(path, admin);
  const usage = { handle: deps.handle, ledger: deps.ledger, currency: () => deps.current().config.metering.prices.currency };
  app.get('/admin/usage', usageHandler(usage));
  app.get('/admin/usage/requests', ledgerRowsHandler(usage));
  app.use(keyRoutes({ keys: deps.keys, trail: deps.trail }));
  app.get('/admin/audit', listAuditHandler(deps.handle, deps.trail));
  app.use(resourceRoutes({ handle: deps.handle, registry: deps.ownership, trail: deps.trail }));
  app.post('/admin/config/reload', async (req, res) => {
    res.json(await deps.reload(String(res.locals.adminId), String(res.getHeader('x-request-id'))));
  });

  app.use(((req, res) => deps.fallback(req, res)) satisfies RequestHandler);
  app.use(((err, req, res, _next) => {
    const error = expressClientError(err) ?? asGatewayError(err);
    if (error.status === 500) deps.logger.error({ err, path: req.path }, 'unhandled error');
    if (error.code === 'database_unavailable') deps.metrics.recordDatabaseError();
    // The audit hook reads it: a failed admin write is recorded with its code.
    res.locals.errorCode = error.code;
    writeError(res, error);
  }) satisfies ErrorRequestHandler);
  return app;
}
