import type { RequestListener } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { createOperationsApp, type ReloadResult } from './admin/app.js';
import { AuditTrail } from './admin/audit.js';
import { AUTH_FAILURE_REASONS, KeyAdmin, RuntimeKeys, startKeySync } from './auth/index.js';
import { ConfigError, loadConfig, storeMode, type Config } from './config/index.js';
import type { ConnectionEvents } from './connections/index.js';
import { applicableConfig, diffConfig } from './config/reload.js';
import { asGatewayError, GatewayError, writeError } from './errors.js';
import { createLimiter, createLimitStore } from './limits/index.js';
import { buildLive, retireLive, type Live, type Services } from './live.js';
import { Ledger } from './metering/index.js';
import { createLogger, createMetrics, requestIdFor, type Logger, type Metrics } from './observability/index.js';
import { OwnershipRegistry } from './ownership/index.js';
import { PROJECT_FORBIDDEN } from './projects/index.js';
import { BufferBudget, createRouteTable } from './proxy/index.js';
import { connectRedis } from './redis/index.js';
import { StoreHandle } from './store/index.js';

/** How long start-up waits for the shared store before serving without it. */
const STORE_CONNECT_WAIT_MS = 3000;
/** Time given to exchanges to complete once their connections are closed, even past the deadline. */
const COMPLETION_FLOOR_MS = 250;

/** Waits for `work` (its failure included) or `ms`, whichever comes first. */
async function settleWithin(work: Promise<unknown>, ms: number): Promise<void> {
  const timer = new AbortController();
  await Promise.race([work.catch(() => undefined), delay(Math.max(0, ms), undefined, { signal: timer.signal }).catch(() => undefined)]);
  timer.abort();
}

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
  reload(actor: string, requestId: string): Promise<ReloadResult>;
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
}

function createGatewayMetrics(config: Config): Metrics {
  return createMetrics({
    maxTeamProjects: config.metrics.maxTeamProjects,
    knownLabels: {
      upstreams: ['service', 'inference'],
      authFailureReasons: [...AUTH_FAILURE_REASONS, PROJECT_FORBIDDEN],
      stores: storeMode(config.redis) === 'memory' ? [] : ['redis'],
    },
  });
}

/** The durable store and what lives on it: runtime keys (kept in step), the audit trail, the ledger. */
function createDurableParts(config: Config, logger: Logger, metrics: Metrics) {
  const onDatabaseError = (): void => metrics.recordDatabaseError();
  const runtimeKeys = new RuntimeKeys();
  const handle = new StoreHandle(config.database, {
    logger,
    // Runtime keys and ownership are loaded before the first request is served (and again when
    // a database that was away at start-up comes back).
    onOpen: async () => {
      void ledger.deleteExpired();
      await Promise.all([keySync.loadAll(), ownership.loadAll()]);
    },
  });
  const keySync = startKeySync(handle, runtimeKeys, { refreshIntervalMs: config.database.refreshIntervalMs, onError: onDatabaseError });
  const ownership = new OwnershipRegistry(handle, {
    requestTimeoutMs: config.database.requestTimeoutMs,
    refreshIntervalMs: config.database.refreshIntervalMs,
    onDatabaseError,
    onRecordDropped: (record) => logger.error({ resource: record }, 'a training resource creation could not be recorded: the database was away too long'),
  });
  const trail = new AuditTrail(handle, logger, onDatabaseError);
  let ledgerSettings = config.metering.ledger;
  const ledger = new Ledger(handle, {
    enabled: () => ledgerSettings.enabled,
    retentionDays: () => ledgerSettings.retentionDays,
    maxBuffered: () => ledgerSettings.maxBufferedRows,
    onDropped: (row, reason) => {
      metrics.recordUsageRowDropped();
      logger.error({ requestId: row.requestId, team: row.team, project: row.project, reason }, 'usage ledger row dropped: the database was away too long');
    },
    onDatabaseError,
  });
  const configureLedger = (next: Config['metering']['ledger']): void => {
    ledgerSettings = next;
  };
  return { runtimeKeys, handle, keySync, ownership, trail, ledger, configureLedger };
}

/** Turns a validated Config into the gateway's request listener. Everything the hot path needs is built here. */
export async function createGateway(initial: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(initial.logging.level);
  const metrics = createGatewayMetrics(initial);
  const onStoreError = (store: string): void => metrics.recordStoreError(store);
  const redis = connectRedis(initial.redis);
  const limiter = createLimiter(initial, createLimitStore(initial, redis, () => onStoreError('redis')), {
    onStoreError,
    onRejected: (scope, limit) => metrics.recordRejection(scope, limit),
  });
  const durable = createDurableParts(initial, logger, metrics);
  const bufferBudget = new BufferBudget(initial.server.maxBufferedBytes);
  metrics.watchBufferedBytes(() => bufferBudget.used);
  const services: Services = {
    logger,
    metrics,
    limiter,
    ledger: durable.ledger,
    runtimeKeys: durable.runtimeKeys,
    ownership: durable.ownership,
    bufferBudget,
    routes: createRouteTable(),
  };

  await durable.handle.open();
  let live = await buildLive(initial, services);
  const retiring = new Set<Promise<void>>();
  let draining = false;

  const reload = async (actor: string, requestId: string): Promise<ReloadResult> => {
    try {
      if (options.configPath === undefined) throw new ConfigError('this gateway was not started from a config file: nothing to reload');
      const next = loadConfig(options.configPath);
      const { changed, restartRequired } = diffConfig(live.config, next);
      const applied = applicableConfig(live.config, next);
      const previous = live;
      live = await buildLive(applied, services, previous);
      limiter.configure(applied);
      bufferBudget.max = applied.server.maxBufferedBytes;
      durable.configureLedger(applied.metering.ledger);
      logger.level = applied.logging.level;
      const retired = retireLive(previous, live).finally(() => retiring.delete(retired));
      retiring.add(retired);
      metrics.recordConfigReload('ok');
      durable.trail.record(actor, 'config.reload', 'config', 'ok', requestId);
      logger.info({ changed, restartRequired }, 'configuration reloaded');
      return { status: 'reloaded', changed, restartRequired };
    } catch (err) {
      metrics.recordConfigReload('error');
      const message = err instanceof ConfigError ? err.message : `the configuration could not be applied: ${(err as Error).message}`;
      durable.trail.record(actor, 'config.reload', 'config', 'invalid_config', requestId);
      throw new GatewayError(400, 'invalid_config', message);
    }
  };

  const keys = new KeyAdmin(durable.handle, durable.runtimeKeys, durable.keySync, () => live.config.auth.keys);
  const app = createOperationsApp({
    current: () => live,
    limiter,
    metrics,
    logger,
    handle: durable.handle,
    ledger: durable.ledger,
    keys,
    ownership: durable.ownership,
    trail: durable.trail,
    reload,
    isDraining: () => draining,
    metricsPath: initial.metrics.port === null ? initial.metrics.path : null,
    // Paths outside the route table (and outside /v1) get the same 400/404/405 answers.
    fallback: (req, res) => live.route(req, res),
  });

  if (!(await limiter.whenConnected(STORE_CONNECT_WAIT_MS))) {
    logger.warn(
      { onStoreError: initial.rateLimits.onStoreError },
      `Redis is not reachable after ${STORE_CONNECT_WAIT_MS} ms; starting anyway (${initial.rateLimits.onStoreError === 'open' ? 'limits hold per instance' : 'limited routes answer 503'} until it is).`,
    );
  }
  if (live.authenticator.credentialCount() === 0) {
    logger.warn('No API keys are configured: every /v1 request will be refused. Create one with `npm run keygen -- --team <team>` and add it under auth.keys, or POST /admin/keys.');
  }

  /**
   * /v1 traffic goes straight to the pipeline: Express's router and request decoration cost
   * more per request than the whole proxy hop (bench/RESULTS.md), and the pipeline needs none
   * of it. Everything else (health, metrics, admin) is served by Express.
   */
  const handleRequest: RequestListener = (req, res) => {
    if (!req.url?.startsWith('/v1/')) {
      app(req, res);
      return;
    }
    if (draining) res.setHeader('connection', 'close');
    try {
      live.route(req, res);
    } catch (err) {
      res.setHeader('x-request-id', requestIdFor(req.headers['x-request-id']));
      writeError(res, asGatewayError(err));
    }
  };

  const idle = async (): Promise<void> => {
    await Promise.all([live.v1.idle(), ...retiring]);
  };
  return {
    handleRequest,
    get config() {
      return live.config;
    },
    logger,
    get metricsHandler() {
      return live.metricsHandler;
    },
    connectionEvents: {
      watch: (counts) => metrics.watchConnections(counts),
      evicted: (reason) => metrics.recordConnectionEvicted(reason),
      refused: () => metrics.recordConnectionRefused(),
    },
    startDraining() {
      draining = true;
    },
    reload,
    async settled() {
      await idle();
      await Promise.all([limiter.settled(), durable.ledger.flush(), durable.trail.flush()]);
    },
    async close(deadline = Date.now() + live.config.server.shutdownGraceMs) {
      // Exchanges cut at the deadline complete (settle, meter, log) a few ticks after their
      // connections close; then ledger rows still waiting for a database that is down are given
      // up at the deadline, so the whole shutdown fits in one grace period.
      await settleWithin(idle(), Math.max(COMPLETION_FLOOR_MS, deadline - Date.now()));
      await Promise.allSettled([
        durable.ledger.close(deadline),
        durable.trail.close(deadline),
        durable.ownership.close(deadline),
        limiter.close(),
        live.chatChecker.close(),
      ]);
      durable.keySync.stop();
      await durable.handle.close();
      redis?.disconnect();
      for (const upstream of Object.values(live.upstreams)) upstream.close();
    },
  };
}
