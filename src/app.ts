import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { createOperationsApp } from './admin/app.js';
import { AUTH_FAILURE_REASONS, createAuthenticator } from './auth/index.js';
import { storeMode, type Config } from './config/index.js';
import { asGatewayError, writeError } from './errors.js';
import { createLimiter, createLimitStore } from './limits/index.js';
import { createPriceBook, createUsageStore } from './metering/index.js';
import { createLogger, createMetrics, createMetricsEndpoint, requestIdFor, type Logger, type Metrics } from './observability/index.js';
import { createV1Handler } from './pipeline/index.js';
import { PROJECT_FORBIDDEN } from './projects/index.js';
import { BufferBudget, createRouteTable, createUpstream, resolveRoute, type Upstream, type UpstreamName } from './proxy/index.js';
import { connectRedis, type RedisConnection } from './redis/index.js';
import { createChatBodyChecker } from './validation/index.js';

/** How long start-up waits for the shared store before serving without it. */
const STORE_CONNECT_WAIT_MS = 3000;
/** Usage writes run off the request path: a longer command timeout than the limiter's reply deadline. */
const USAGE_COMMAND_TIMEOUT_MS = 2000;

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
  readonly config: Config;
  readonly logger: Logger;
  /** Serves the exposition (mounted on the app unless `metrics.port` asks for its own listener). */
  readonly metricsHandler: ReturnType<typeof createMetricsEndpoint>;
  /** /readyz turns 503 and responses ask clients to close their connections. */
  startDraining(): void;
  /** Resolves when every finished request has settled its limits and written its usage (tests, shutdown). */
  settled(): Promise<void>;
  /**
   * Flushes usage and closes stores, connections and upstream pools. Usage waiting for a store
   * that is down is given up at `deadline` (epoch ms; default: `server.shutdownGraceMs` from now).
   */
  close(deadline?: number): Promise<void>;
}

export interface GatewayOptions {
  /** A logger to use instead of one built from config (tests pass a silent one). */
  readonly logger?: Logger;
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

/** Turns a validated Config into the gateway's request listener. Everything the hot path needs is built here. */
export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logging.level);
  const metrics = createGatewayMetrics(config);
  const onStoreError = (store: string): void => metrics.recordStoreError(store);
  // Redis, when the config's mode asks for it: one connection for limits, one for usage writes.
  const connections: RedisConnection[] = [];
  const connect = (commandTimeoutMs?: number): RedisConnection | undefined => {
    const connection = connectRedis(config.redis, { commandTimeoutMs });
    if (connection) connections.push(connection);
    return connection;
  };
  const authenticator = await createAuthenticator(config);
  const limitStore = createLimitStore(config, connect(), () => onStoreError('redis'));
  const limiter = createLimiter(config, limitStore, {
    onStoreError,
    onRejected: (scope, limit) => metrics.recordRejection(scope, limit),
  });
  const usageStore = createUsageStore(config, connect(USAGE_COMMAND_TIMEOUT_MS), {
    onStoreError,
    onUsageDropped: (record) => logger.error({ usage: record }, 'usage buffer full: dropped the oldest unwritten usage record'),
  });
  const upstreams: Record<UpstreamName, Upstream> = {
    service: createUpstream('service', config.upstreams.service),
    inference: createUpstream('inference', config.upstreams.inference),
  };
  const routes = createRouteTable();
  const bufferBudget = new BufferBudget(config.server.maxBufferedBytes);
  metrics.watchBufferedBytes(() => bufferBudget.used);
  // What both the /v1 pipeline and the operations app are built from.
  const services = { config, authenticator, limiter, usageStore, metrics, logger };
  const prices = createPriceBook(config.metering.prices);
  const chatChecker = createChatBodyChecker({
    defaultCompletionTokens: config.rateLimits.defaultCompletionTokens,
    forceStreamUsage: config.metering.forceStreamUsage,
  });
  const v1 = createV1Handler({ ...services, upstreams, bufferBudget, prices, chatChecker });
  const metricsHandler = createMetricsEndpoint(metrics, config.metrics.bearerToken);
  let draining = false;

  const routeV1 = (req: IncomingMessage, res: ServerResponse): void => {
    v1.handle(req, res, resolveRoute(routes, req.method ?? 'GET', req.url ?? '/'));
  };
  const app = createOperationsApp({
    ...services,
    metricsHandler,
    isDraining: () => draining,
    // Paths outside the route table (and outside /v1) get the same 400/404/405 answers.
    fallback: routeV1,
  });

  if (!(await limiter.whenConnected(STORE_CONNECT_WAIT_MS))) {
    logger.warn(
      { onStoreError: config.rateLimits.onStoreError },
      `Redis is not reachable after ${STORE_CONNECT_WAIT_MS} ms; starting anyway (${config.rateLimits.onStoreError === 'open' ? 'limits hold per instance' : 'limited routes answer 503'} until it is).`,
    );
  }
  if (authenticator.credentialCount === 0) {
    logger.warn('No API keys are configured: every /v1 request will be refused. Create one with `npm run keygen -- --team <team>` and add it under auth.keys.');
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
      routeV1(req, res);
    } catch (err) {
      res.setHeader('x-request-id', requestIdFor(req.headers['x-request-id']));
      writeError(res, asGatewayError(err));
    }
  };

  return {
    handleRequest,
    config,
    logger,
    metricsHandler,
    startDraining() {
      draining = true;
    },
    async settled() {
      await v1.idle();
      await Promise.all([limiter.settled(), usageStore.flush()]);
    },
    async close(deadline = Date.now() + config.server.shutdownGraceMs) {
      // Exchanges cut at the deadline complete (settle, meter, log) a few ticks after their
      // connections close; then usage still waiting for a store that is down is given up at
      // the deadline, so the whole shutdown fits in one grace period.
      await settleWithin(v1.idle(), Math.max(COMPLETION_FLOOR_MS, deadline - Date.now()));
      await settleWithin(usageStore.flush(), deadline - Date.now());
      await Promise.allSettled([usageStore.close(), limiter.close(), chatChecker.close()]);
      for (const connection of connections) connection.disconnect();
      for (const upstream of Object.values(upstreams)) upstream.close();
    },
  };
}
