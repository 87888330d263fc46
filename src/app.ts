import type { RequestListener } from 'node:http';
import { AuditTrail, createOperationsApp, type ReloadResult } from './admin/index.js';
import { AUTH_FAILURE_REASONS, AuthFailureLimit, RuntimeAdminKeys, RuntimeKeys } from './auth/index.js';
import { AdminKeyAdmin, syncAdminKeys } from './admin-keys/index.js';
import { KeyAdmin, KeyExpiryWatch, startKeySync } from './keys/index.js';
import { ConfigStatus, storeMode, type Config } from './config/index.js';
import type { ConnectionEvents } from './connections/index.js';
import { createConsoleHandler, type ConsoleHandler } from './console/index.js';
import { asGatewayError, writeError } from './errors.js';
import { createLimiter, createLimitStore, type Limiter } from './limits/index.js';
import { NO_SLICE, PartList, type Part } from './lifecycle.js';
import { LiveConfiguration, type Live, type Services } from './live.js';
import { Ledger } from './metering/index.js';
import { createLogger, createMetrics, createOutboxMetrics, requestIdFor, type Logger, type Metrics, type MetricsOptions } from './observability/index.js';
import { Outbox, type EventSink } from './outbox/index.js';
import { OwnershipRegistry } from './ownership/index.js';
import { PROJECT_FORBIDDEN } from './projects/index.js';
import { BufferBudget } from './proxy/index.js';
import { connectRedis } from './redis/index.js';
import { reloader } from './reloader.js';
import { StoreHandle, type SiblingChannel } from './store/index.js';
import { startTeamSync, TeamAdmin, TeamDirectory } from './teams/index.js';
import { createTracing, type Tracing } from './tracing/index.js';

/** How long start-up waits for the shared store before serving without it. */
const STORE_CONNECT_WAIT_MS = 3000;

/** A built gateway: what start/stop code needs to drive it. */
export interface Gateway {
  /** The server's request listener: /v1 to the pipeline, the rest to the operations app. */
  readonly handleRequest: RequestListener;
  /** The configuration running now (a reload replaces it). */
  readonly config: Config;
  readonly logger: Logger;
  /** Serves the exposition on `metrics.port`'s own listener. */
  readonly metricsHandler: Live['metricsHandler'];
  /** Where the listener's connection registry reports (metrics). */
  readonly connectionEvents: ConnectionEvents;
  /** /readyz turns 503 and responses ask clients to close their connections. */
  startDraining(): void;
  /**
   * Re-reads the config file (SIGHUP, POST /admin/config/reload) and applies what can change
   * while running; rejects with ConfigError and changes nothing when the file is not valid.
   */
  reload(actor: string, requestId: string, actorRole?: string, echo?: boolean): Promise<ReloadResult>;
  /** Where notifications are published (SPEC 24): the durable outbox. */
  readonly events: EventSink;
  /** Resolves when every finished request has settled its limits and been written to the ledger (tests, shutdown). */
  settled(): Promise<void>;
  /**
   * Writes the ledger and closes stores, connections and upstream pools. Rows waiting for a
   * database that is down are given up at `deadline` (epoch ms; default: `server.shutdownGraceMs` from now).
   */
  close(deadline?: number): Promise<void>;
}

export interface GatewayOptions {
  /** A logger to use instead of one built from config (tests pass a silent one). */
  readonly logger?: Logger;
  /** The file the config came from: what a reload re-reads (without one, reloads are refused). */
  readonly configPath?: string;
  /** Cluster workers: the exposition of every worker (see MetricsOptions.exposition). */
  readonly exposition?: MetricsOptions['exposition'];
  /** Cluster workers: the others on the same SQLite file. */
  readonly sqliteSiblings?: SiblingChannel;
  /** Cluster workers: the path prefix of this worker's ledger journal (rows survive the worker's kill -9). */
  readonly ledgerJournal?: string;
  /** Cluster workers: POST /admin/config/reload applied the file here; the other workers reload too. */
  readonly onAdminReload?: () => void;
  /** Where the console's build is (default dist/console/ of the repository); without a build no console is served. */
  readonly consoleDir?: string;
  /**
   * Where budget alerts and key.expiring notices go (SPEC 24: the outbox). Without one, nothing
   * is decided or emitted.
   */
  readonly events?: EventSink;
}

function createGatewayMetrics(config: Pick<Config, 'metrics' | 'redis' | 'upstreams'>, exposition: GatewayOptions['exposition']): Metrics {
  return createMetrics({
    exposition,
    maxTeamProjects: config.metrics.maxTeamProjects,
    knownLabels: {
      upstreams: Object.keys(config.upstreams),
      authFailureReasons: [...AUTH_FAILURE_REASONS, PROJECT_FORBIDDEN],
      stores: storeMode(config.redis) === 'memory' ? [] : ['redis'],
    },
  });
}

/** The durable store and what lives on it: runtime keys (kept in step), ownership records, the audit trail, the ledger. */
function createDurableParts(config: Config, logger: Logger, metrics: Metrics, parts: PartList, teams: TeamDirectory, options: GatewayOptions) {
  const onDatabaseError = (): void => metrics.recordDatabaseError();
  const runtimeKeys = new RuntimeKeys();
  const handle = new StoreHandle(config.database, {
    logger,
    sqliteSiblings: options.sqliteSiblings,
    // Runtime keys and ownership are loaded before the first request is served (and again when
    // a database that was away at start-up comes back).
    onOpen: async () => {
      void ledger.deleteExpired();
      await Promise.all([keySync.loadAll(), ownership.loadAll(), teamSync.loadAll(), adminKeySync.loadAll()]);
    },
  });
  parts.add('store', NO_SLICE, { close: () => handle.close() });
  const expiry = options.events && new KeyExpiryWatch(() => runtimeKeys.records(), options.events);
  if (expiry) parts.add('key expiry notices', NO_SLICE, { close: () => expiry.stop() });
  const onLoaded = expiry && ((id: string | undefined): void => (id === undefined ? expiry.checkAll() : expiry.checkKey(runtimeKeys.record(id))));
  const keySync = startKeySync(handle, runtimeKeys, { refreshIntervalMs: config.database.refreshIntervalMs, onError: onDatabaseError, onLoaded });
  parts.add('key sync', NO_SLICE, { close: () => keySync.stop() });
  const teamSync = startTeamSync(handle, teams, { refreshIntervalMs: config.database.refreshIntervalMs, onError: onDatabaseError });
  parts.add('team sync', NO_SLICE, { close: () => teamSync.stop() });
  const runtimeAdmins = new RuntimeAdminKeys();
  const adminKeySync = syncAdminKeys(handle, runtimeAdmins, { refreshIntervalMs: config.database.refreshIntervalMs, onError: onDatabaseError });
  parts.add('admin key sync', NO_SLICE, { close: () => adminKeySync.stop() });
  const ownership = new OwnershipRegistry(handle, {
    requestTimeoutMs: config.database.requestTimeoutMs,
    refreshIntervalMs: config.database.refreshIntervalMs,
    onDatabaseError,
    onRecordDropped: (record) => logger.error({ resource: record }, 'a training resource creation could not be recorded: the database was away too long'),
  });
  parts.add('ownership registry', NO_SLICE, { close: (deadline) => ownership.close(deadline) });
  const trail = new AuditTrail(handle, logger, onDatabaseError);
  parts.add('audit trail', NO_SLICE, { close: (deadline) => trail.close(deadline) });
  const ledger = createLedger(handle, config.metering.ledger, logger, metrics, parts, options.ledgerJournal);
  const outbox = createOutbox(config, handle, logger, metrics, parts);
  return { runtimeKeys, runtimeAdmins, handle, keySync, teamSync, adminKeySync, ownership, trail, ledger, outbox };
}

/** The same on every instance, so a receiver dedupes usage events by source and id. */
const EXPORT_SOURCE = '/tollgate';

/** The notification outbox (SPEC 24): stored in the database, delivered off the request path by the instance holding the lease. */
function createOutbox(config: Config, handle: StoreHandle, logger: Logger, metrics: Metrics, parts: PartList): Outbox {
  const outboxMetrics = createOutboxMetrics(metrics.registry);
  const outbox = new Outbox(handle, config.notifications, {
    source: EXPORT_SOURCE,
    delivered: (sink, result) => outboxMetrics.recordDelivery(sink, result),
    error: (err) => logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'the notification outbox could not reach the database; retrying'),
    dropped: (eventId, sink) => logger.error({ eventId, sink }, 'a notification was dropped: the database was away too long'),
  });
  outboxMetrics.watchSinks(() => outbox.health().map((sink) => ({ name: sink.name, pending: sink.pending, ...(sink.kind === 'export' ? { lagSeconds: sink.lagSeconds } : {}) })));
  parts.add('notification outbox', (next) => next.notifications, { reconfigure: (next) => outbox.configure(next), close: (deadline) => outbox.close(deadline) });
  return outbox;
}

/** The usage ledger: its settings (on/off, retention, buffer) follow reloads. */
function createLedger(handle: StoreHandle, initial: Config['metering']['ledger'], logger: Logger, metrics: Metrics, parts: PartList, journal?: string): Ledger {
  let settings = initial;
  const ledger = new Ledger(handle, {
    enabled: () => settings.enabled,
    retentionDays: () => settings.retentionDays,
    maxBuffered: () => settings.maxBufferedRows,
    onDropped: (row, reason, cause) => {
      metrics.recordUsageRowDropped();
      const why = reason === 'refused' ? `the database refused it: ${cause instanceof Error ? cause.message : String(cause)}` : 'the database was away too long';
      logger.error({ rowId: row.id, requestId: row.requestId, team: row.team, project: row.project, reason }, `usage ledger row dropped: ${why}`);
    },
    onDatabaseError: () => metrics.recordDatabaseError(),
    ...(journal === undefined ? {} : { journal, onJournalError: (err: unknown) => logger.error({ err: (err as Error).message, journal }, 'usage ledger journal failed') }),
  });
  const part: Part<Config['metering']['ledger']> = {
    reconfigure: (next) => {
      settings = next;
    },
    close: (deadline) => ledger.close(deadline),
  };
  parts.add('ledger', (config) => config.metering.ledger, part);
  return ledger;
}

/** Redis, and what counts in it: the limiter (limits and budgets) and the bad-credential throttle. */
function createCounters(config: Config, metrics: Metrics, parts: PartList, teams: TeamDirectory, events: EventSink | undefined) {
  const onStoreError = (store: string): void => metrics.recordStoreError(store);
  const redis = connectRedis(config.redis);
  parts.add('redis', NO_SLICE, { close: () => redis?.disconnect() });
  const limiter = createLimiter(config, createLimitStore(config, redis, () => onStoreError('redis')), {
    onStoreError,
    onRejected: (scope, limit) => metrics.recordRejection(scope, limit),
  }, teams, events);
  parts.add('limiter', (config) => config, { reconfigure: (next) => limiter.configure(next), close: () => limiter.close() });
  const authFailureLimit = new AuthFailureLimit(config.auth.failureLimit, redis, {
    keyPrefix: config.redis.keyPrefix,
    replySilenceMs: config.redis.commandTimeoutMs,
    onStoreError: () => onStoreError('redis'),
  });
  parts.add('auth failure limit', (config) => config.auth.failureLimit, { reconfigure: (next) => authFailureLimit.configure(next), close: () => undefined });
  return { limiter, authFailureLimit };
}

/**
 * What lives as long as the process, each part added to `parts` in the order shutdown reverses:
 * teams, counters, the durable store and what lives on it, the buffer budget, the logger, the tracer.
 */
function createServices(initial: Config, logger: Logger, metrics: Metrics, parts: PartList, options: GatewayOptions) {
  // Teams of the config file and the store: the limiter's team scope and the authenticator read them per request.
  const teams = new TeamDirectory(initial.teams.records);
  parts.add('teams', (config) => config.teams.records, { reconfigure: (next) => teams.configure(next), close: () => undefined });
  // Budget alerts and key notices go to the outbox (built with the store, after the counters), unless the caller gives its own sink.
  let outbox: EventSink | undefined;
  const events: EventSink = options.events ?? { publish: (event) => outbox?.publish(event), recover: (event) => outbox?.publish(event) };
  const { limiter, authFailureLimit } = createCounters(initial, metrics, parts, teams, events);
  const durable = createDurableParts(initial, logger, metrics, parts, teams, { ...options, events });
  outbox = durable.outbox;
  const bufferBudget = createBufferBudget(initial, metrics, parts);
  parts.add('logger', (config) => config.logging.level, { reconfigure: (level) => void (logger.level = level), close: () => undefined });
  const { runtimeKeys, ownership, ledger } = durable;
  const tracing = createTracingPart(initial, metrics, parts);
  const services: Services = { logger, metrics, limiter, ledger, runtimeKeys, runtimeAdmins: durable.runtimeAdmins, teams, ownership, bufferBudget, authFailureLimit, tracing };
  return { services, teams, durable };
}

/** Turns a validated Config into the gateway's request listener. Everything the hot path needs is built here. */
export async function createGateway(initial: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(initial.logging.level);
  const metrics = createGatewayMetrics(initial, options.exposition);
  const parts = new PartList();
  const { services, teams, durable } = createServices(initial, logger, metrics, parts, options);
  const { limiter, ledger } = services;

  await durable.handle.open();
  const live = parts.add('live configuration', (config) => config, await LiveConfiguration.build(initial, services));
  let draining = false;
  const configStatus = new ConfigStatus(options.configPath ?? 'no file: the configuration was passed in at start-up');
  const reload = reloader(options.configPath, live, parts, { logger, metrics, trail: durable.trail, status: configStatus });
  const adminReload: typeof reload = async (actor, requestId, actorRole) => {
    const result = await reload(actor, requestId, actorRole);
    options.onAdminReload?.();
    return result;
  };
  const app = operationsAppOf(initial, { ...services, teams }, durable, live, { reload: adminReload, configStatus, isDraining: () => draining });
  await warnAboutStartingState(initial, limiter, live.current, logger);

  return {
    handleRequest: routeRequests(app, live, () => draining, createConsoleHandler(options.consoleDir)),
    get config() {
      return live.current.config;
    },
    logger,
    get metricsHandler() {
      return live.current.metricsHandler;
    },
    connectionEvents: connectionEventsOf(metrics),
    events: durable.outbox,
    startDraining() {
      draining = true;
    },
    reload,
    settled: async () => void (await live.idle(), await Promise.all([limiter.settled(), ledger.flush(), durable.trail.flush(), durable.outbox.flush()])),
    async close(deadline = Date.now() + live.current.config.server.shutdownGraceMs) {
      // Last built first: requests finish, then the ledger writes while the database is open, then connections close.
      for (const failure of await parts.close(deadline)) logger.error({ part: failure.name, err: failure.error }, 'a part failed to close');
    },
  };
}

/** What the operations app is handed beside the parts: reload (as the admin route runs it), its outcomes, the drain flag. */
interface OperationsControls {
  readonly reload: (actor: string, requestId: string, actorRole?: string) => Promise<ReloadResult>;
  readonly configStatus: ConfigStatus;
  readonly isDraining: () => boolean;
}

/** The operations app (health, metrics, /admin/*): the admin operations on keys, teams and admin keys, over the parts built for the gateway. */
function operationsAppOf(initial: Config, services: Services & { teams: TeamDirectory }, durable: ReturnType<typeof createDurableParts>, live: LiveConfiguration, controls: OperationsControls) {
  const { limiter, teams, runtimeKeys } = services;
  return createOperationsApp({
    current: () => live.current,
    limiter,
    authFailureLimit: services.authFailureLimit,
    metrics: services.metrics,
    logger: services.logger,
    handle: durable.handle,
    ledger: services.ledger,
    keys: new KeyAdmin(durable.handle, runtimeKeys, durable.keySync, () => live.current.config.auth.keys),
    teams: new TeamAdmin(durable.handle, teams, durable.teamSync, limiter, () => live.current.config.auth.keys),
    adminKeys: new AdminKeyAdmin(durable.handle, durable.runtimeAdmins, durable.adminKeySync, () => live.current.config.auth.admin.keys),
    ownership: services.ownership,
    trail: durable.trail,
    notifications: durable.outbox,
    ...controls,
    metricsPath: initial.metrics.port === null ? initial.metrics.path : null,
    fallback: (req, res) => live.current.route(req, res),
  });
}

/** Bytes of request bodies held at once, across requests (`server.maxBufferedBytes`, reloadable), watched as a gauge. */
function createBufferBudget(config: Pick<Config, 'server'>, metrics: Metrics, parts: PartList): BufferBudget {
  const budget = new BufferBudget(config.server.maxBufferedBytes);
  metrics.watchBufferedBytes(() => budget.used);
  parts.add('buffer budget', (next) => next.server.maxBufferedBytes, { reconfigure: (max) => void (budget.max = max), close: () => undefined });
  return budget;
}

/**
 * The tracer (SPEC 18), when `tracing.enabled`: built before the live configuration, so it closes
 * after the requests in flight have ended their spans, sending what is batched until the deadline.
 */
function createTracingPart(config: Config, metrics: Metrics, parts: PartList): Tracing | undefined {
  const tracing = createTracing(config.tracing, { spansDropped: (count) => metrics.recordTraceSpansDropped(count) });
  if (tracing) parts.add('tracing', NO_SLICE, { close: (deadline) => tracing.close(deadline) });
  return tracing;
}

/** Where the listener's connection registry reports (SPEC 15 pressure): gauges and counters. */
function connectionEventsOf(metrics: Metrics): ConnectionEvents {
  return {
    watch: (counts) => metrics.watchConnections(counts),
    evicted: (reason) => metrics.recordConnectionEvicted(reason),
    refused: () => metrics.recordConnectionRefused(),
  };
}

/** Start-up warnings: a shared store that is not there yet, and a gateway with no keys at all. */
async function warnAboutStartingState(config: Config, limiter: Limiter, live: Live, logger: Logger): Promise<void> {
  if (!(await limiter.whenConnected(STORE_CONNECT_WAIT_MS))) {
    const { onStoreError } = config.rateLimits;
    logger.warn(
      { onStoreError },
      `Redis is not reachable after ${STORE_CONNECT_WAIT_MS} ms; starting anyway (${onStoreError === 'open' ? 'limits hold per instance' : 'limited routes answer 503'} until it is).`,
    );
  }
  if (live.authenticator.credentialCount() === 0) {
    logger.warn('No API keys are configured: every /v1 request will be refused. Create one with `npm run keygen -- --team <team>` and add it under auth.keys, or POST /admin/keys.');
  }
}

/**
 * /v1 traffic goes straight to the pipeline: Express's router and request decoration cost
 * more per request than the whole proxy hop (bench/RESULTS.md), and the pipeline needs none
 * of it. Everything else (health, metrics, admin) is served by Express.
 */
function routeRequests(app: RequestListener, live: LiveConfiguration, isDraining: () => boolean, serveConsole: ConsoleHandler | null): RequestListener {
  return (req, res) => {
    if (!req.url?.startsWith('/v1/')) {
      // The console's files (SPEC 17) before Express: a static file needs none of its routing.
      if (serveConsole !== null && req.url?.startsWith('/console')) serveConsole(req, res, () => app(req, res));
      else app(req, res);
      return;
    }
    if (isDraining()) res.setHeader('connection', 'close');
    try {
      live.current.route(req, res);
    } catch (err) {
      res.setHeader('x-request-id', requestIdFor(req.headers['x-request-id']));
      writeError(res, asGatewayError(err));
    }
  };
}
