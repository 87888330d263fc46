import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler } from 'express';
import type { AuthFailureLimit, Authenticator } from '../auth/index.js';
import type { AdminKeyAdmin } from '../admin-keys/index.js';
import type { KeyAdmin } from '../keys/index.js';
import type { Config, ConfigStatus } from '../config/index.js';
import { asGatewayError, errors, GatewayError, writeError } from '../errors.js';
import type { Limiter } from '../limits/index.js';
import type { Ledger } from '../metering/index.js';
import { requestIdFor, type Logger, type Metrics } from '../observability/index.js';
import type { StoreHandle } from '../store/index.js';
import type { OwnershipRegistry } from '../ownership/index.js';
import type { TeamAdmin } from '../teams/index.js';
import type { ModelAccess, ModelRouter } from '../models/index.js';
import { malformedPathEncoding, type Upstream } from '../proxy/index.js';
import { audited, type AuditTrail } from './audit.js';
import { ConsoleSessions } from '../sessions/index.js';
import { requireAdmin, requireCsrfToken } from './auth.js';
import { mountSessionRoutes } from './session.js';
import { mountOidcRoutes, ProviderSlot, type SignInAudit } from '../oidc/index.js';
import { authorize, refuseNul } from '../admin-requests/index.js';
import type { Reload } from './config-handlers.js';
import { adminPaths, type AdminRouteDeps, type AdminRouteSpec } from './routes.js';
import type { Outbox } from '../outbox/index.js';

export type { ReloadResult } from './config-handlers.js';

/** The parts of the running configuration the operations app reads on every request (they change on reload). */
export interface CurrentConfig {
  readonly config: Config;
  readonly authenticator: Authenticator;
  readonly metricsHandler: (req: IncomingMessage, res: ServerResponse) => void;
  readonly upstreams: Readonly<Record<string, Pick<Upstream, 'targetStates'>>>;
  /** Who may use which model (SPEC 21): admin writes check lists against its groups and team lists. */
  readonly models: { readonly access: ModelAccess; readonly router: ModelRouter };
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
  readonly teams: TeamAdmin;
  readonly adminKeys: AdminKeyAdmin;
  readonly ownership: OwnershipRegistry;
  readonly trail: AuditTrail;
  /** The notification outbox (SPEC 24). */
  readonly notifications: Outbox;
  /** Re-reads and applies the config file; rejects with 400 invalid_config (nothing changed) when it is not valid. */
  readonly reload: Reload;
  /** The running configuration's source and reload history (GET /admin/config). */
  readonly configStatus: ConfigStatus;
  readonly isDraining: () => boolean;
  /** Where the exposition is served on this listener (null: `metrics.port` has its own). Fixed at start. */
  readonly metricsPath: string | null;
  /** Anything that is not an operational endpoint: answered as a /v1 route would be (400/404/405). */
  readonly fallback: (req: IncomingMessage, res: ServerResponse) => void;
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
  if (type === 'entity.parse.failed') return errors.adminBodyNotJson();
  if (type === 'entity.too.large') return errors.adminBodyTooLarge();
  if (type === 'charset.unsupported') return errors.adminBodyNotUtf8();
  // A content-encoding body-parser does not take (`compress`), or one whose bytes do not inflate (zlib's Z_* codes).
  if (type === 'encoding.unsupported' || (typeof code === 'string' && code.startsWith('Z_'))) return errors.adminBodyUndecodable();
  // What body-parser has left are 400s (an aborted upload, a length that did not match); its 403 needs a `verify` we do not pass.
  return errors.adminBodyUnreadable();
}

/** Console sign-in and sign-out (SPEC 17). */
const SESSION_PATH = '/admin/session';

/** Console sign-in: with an admin key (SPEC 17) and through the identity provider (SPEC 25). */
function mountSignIn(app: Express, deps: OperationsAppDeps, sessions: ConsoleSessions): void {
  const config = (): Config => deps.current().config;
  const providers = new ProviderSlot(deps.logger);
  const signOutUrl = async (req: Request): Promise<string | undefined> => providers.of(config().console.oidc)?.endSessionUrl(`${req.protocol}://${req.host}/console/`);
  const shared = { sessions, failureLimit: deps.authFailureLimit, metrics: deps.metrics };
  mountSessionRoutes(app, SESSION_PATH, { ...shared, current: deps.current, trail: deps.trail, signOutUrl }, methodCheck(SESSION_PATH, ['POST', 'GET', 'DELETE']));
  const audit: SignInAudit = (actor, result, requestId, role, email) => deps.trail.record(actor, 'session.create', actor, result, requestId, role, email);
  mountOidcRoutes(app, { ...shared, config, logger: deps.logger, audit }, providers);
}

/** The 405 for a known path: `Allow` lists its methods. Answered before any key is asked for, like the /v1 routes'. */
function methodCheck(path: string, methods: readonly string[]): RequestHandler {
  const allow = methods.join(', ');
  return (req, _res, next) => {
    if (methods.includes(req.method)) return next();
    next(errors.methodNotAllowed(req.method, path, allow));
  };
}

/** Liveness, readiness and (unless `metrics.port` has its own listener) the exposition: GET only, no key. */
function mountProbes(app: Express, deps: OperationsAppDeps): void {
  const probes: Array<[path: string, handler: RequestHandler]> = [
    ['/healthz', (_req, res) => void res.json({ status: 'ok' })],
    ['/readyz', readinessHandler(deps)],
  ];
  if (deps.metricsPath !== null) probes.push([deps.metricsPath, (req, res) => deps.current().metricsHandler(req, res)]);
  for (const [path, handler] of probes) app.route(path).get(handler).all(methodCheck(path, ['GET']));
}

/** `GET /readyz`: 200 when this instance takes traffic, 503 while draining or while the limit store is away. */
function readinessHandler(deps: OperationsAppDeps): RequestHandler {
  return (_req, res) => {
    const draining = deps.isDraining();
    const ready = !draining && deps.limiter.ready();
    // `store` says whether limits are shared or on the per-instance fallback; `database` whether
    // the last database call got through, so keys and ownership are fresh (requests are served
    // from memory either way, so neither makes the instance unready). `upstreams` lists each
    // target's state (SPEC 19); an ejected one does not make the instance unready either: panic
    // mode still tries it, and another instance would have the same targets.
    const upstreams = deps.current().upstreams;
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : draining ? 'draining' : 'store_unavailable',
      store: deps.limiter.storeConnected() ? 'connected' : 'unavailable',
      database: deps.handle.current?.reachable ? 'connected' : 'unavailable',
      upstreams: Object.fromEntries(Object.entries(upstreams).map(([name, upstream]) => [name, upstream.targetStates()])),
    });
  };
}

/**
 * Walks the admin route table: per path, the 405 check, then admin auth, then per entry its
 * audit hook (writes), its JSON body reader and its handler, each built once here.
 */
function mountAdminRoutes(app: Express, deps: OperationsAppDeps, sessions: ConsoleSessions): void {
  const routeDeps: AdminRouteDeps = {
    keys: deps.keys,
    teams: deps.teams,
    adminKeys: deps.adminKeys,
    teamsRequired: () => deps.current().config.teams.require,
    models: () => deps.current().models.access,
    modelRouting: () => {
      const current = deps.current();
      return { config: current.config.models, router: current.models.router, upstreams: current.upstreams };
    },
    trail: deps.trail,
    handle: deps.handle,
    ledger: deps.ledger,
    registry: deps.ownership,
    currency: () => deps.current().config.metering.prices.currency,
    reload: deps.reload,
    configStatus: deps.configStatus,
    notifications: deps.notifications,
  };
  const admin = requireAdmin(deps.current, deps.authFailureLimit, deps.metrics, sessions);
  const json = express.json({ limit: '64kb', strict: false });
  for (const [path, routes] of adminPaths()) {
    const route = app.route(path).all(methodCheck(path, routes.map((r) => r.method)), admin);
    for (const spec of routes) {
      const steps: RequestHandler[] = [];
      if (spec.write?.recordedBy === 'hook') steps.push(audited(deps.trail, spec.write.action));
      // After the audit hook: a write refused for a missing CSRF token or the caller's role is recorded too.
      if (spec.write !== null) steps.push(requireCsrfToken());
      steps.push(authorize(spec));
      if (spec.body === 'json') steps.push(json);
      steps.push(refuseNul);
      route[spec.method.toLowerCase() as Lowercase<AdminRouteSpec['method']>](...steps, spec.handler(routeDeps));
    }
  }
}

/** The one error middleware: every failure as its GatewayError, a 500 (our fault) logged with its stack. */
export function renderErrors(deps: Pick<OperationsAppDeps, 'logger' | 'metrics'>): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const error = expressClientError(err) ?? asGatewayError(err);
    if (error.status === 500) deps.logger.error({ err, path: req.path }, 'unhandled error');
    if (error.code === 'database_unavailable') deps.metrics.recordDatabaseError();
    // The audit hook reads it: a failed admin write is recorded with its code.
    res.locals.errorCode = error.code;
    writeError(res, error);
  };
}

/**
 * The Express app for everything outside /v1: liveness, readiness, metrics (unless they have
 * their own listener) and the admin API (ADMIN_ROUTES).
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
  mountProbes(app, deps);
  // Admin answers hold keys (shown once), sessions' CSRF tokens and every team's usage: no cache keeps them.
  app.use(SESSION_PATH.slice(0, '/admin'.length), ((_req, res, next) => {
    res.setHeader('cache-control', 'no-store');
    next();
  }) satisfies RequestHandler);
  const sessions = new ConsoleSessions(deps.handle, deps.adminKeys);
  mountSignIn(app, deps, sessions);
  mountAdminRoutes(app, deps, sessions);
  app.use(((req, res) => deps.fallback(req, res)) satisfies RequestHandler);
  app.use(renderErrors(deps));
  return app;
}
