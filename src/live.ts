import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { createAuthenticator, type AuthFailureLimit, type Authenticator, type RuntimeAdminKeys, type RuntimeKeys, type TeamStatus } from './auth/index.js';
import { ConfigError, type Config } from './config/index.js';
import type { Part } from './lifecycle.js';
import type { Limiter } from './limits/index.js';
import { createPriceBook, type Ledger, type PriceBook } from './metering/index.js';
import { createMetricsEndpoint, type Logger, type Metrics, type UpstreamTargetState } from './observability/index.js';
import { OwnershipGuard, ownershipPolicy, type OwnershipRegistry } from './ownership/index.js';
import { createModels, type Models, type TeamModelLists } from './models/index.js';
import { createV1Handler, type V1Handler } from './pipeline/index.js';
import type { Tracing } from './tracing/index.js';
import { configRouteSpec, configRoutesProblem, createRouteTable, createUpstream, ROUTES, routeOf, unguardedRoutes, type BufferBudget, type RouteTable, type Upstream, type UpstreamEvents, type UpstreamName } from './proxy/index.js';
import { createChatBodyChecker, type ChatBodyChecker } from './validation/index.js';

/** What lives as long as the process: built once, shared by every configuration. */
export interface Services {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly limiter: Limiter;
  readonly ledger: Ledger;
  readonly runtimeKeys: RuntimeKeys;
  /** Admin keys made through /admin/admin-keys (SPEC 16). */
  readonly runtimeAdmins: RuntimeAdminKeys;
  /** Teams with a record: a disabled one's keys are refused (SPEC 16). */
  readonly teams: TeamStatus & TeamModelLists;
  readonly ownership: OwnershipRegistry;
  readonly bufferBudget: BufferBudget;
  /** Bad-credential counts per client address: they outlive reloads. */
  readonly authFailureLimit: AuthFailureLimit;
  /** The tracer, built once at start-up when `tracing.enabled` (a reload cannot change it). */
  readonly tracing: Tracing | undefined;
}

/**
 * What a configuration builds, rebuilt on every reload: requests started before a reload
 * finish with the parts they started with, new ones get the new parts. Redis, the database,
 * the key cache and the ledger are the same throughout (Services).
 */
export interface Live {
  readonly config: Config;
  readonly authenticator: Authenticator;
  readonly prices: PriceBook;
  readonly upstreams: Readonly<Record<UpstreamName, Upstream>>;
  readonly chatChecker: ChatBodyChecker;
  /** The built-in routes and the configuration's (SPEC 20), compiled once for this configuration. */
  readonly routes: RouteTable;
  /** Who may use which model; the cached host list (kept by a reload that does not change it). */
  readonly models: Models;
  readonly v1: V1Handler;
  readonly metricsHandler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Routes a /v1 request; throws the 400/404/405 for a path or method the table does not know (its span is made). */
  route(req: IncomingMessage, res: ServerResponse): void;
}

/** Where the upstream pools report: ejections and retries as metrics. */
function upstreamEventsOf(metrics: Metrics): UpstreamEvents {
  return {
    targetAdded: (upstream, target) => metrics.recordUpstreamTarget(upstream, target),
    ejected: (upstream, target) => metrics.recordUpstreamEjection(upstream, target),
    retried: (upstream, reason) => metrics.recordUpstreamRetry(upstream, reason),
  };
}

/** The chat checker's settings: a reload that keeps them keeps its worker threads. */
const checkerSettings = (config: Config): string => `${config.rateLimits.defaultCompletionTokens} ${config.metering.forceStreamUsage}`;

/** Builds the config-bound parts; `previous` lends what a reload did not change (the chat checker's workers). */
export async function buildLive(config: Config, services: Services, previous?: Live): Promise<Live> {
  const policy = ownershipPolicy(config);
  const routesProblem = configRoutesProblem(config.routes, policy.enabled);
  if (routesProblem !== undefined) throw new ConfigError(routesProblem);
  const authenticator = await createAuthenticator(config, services.runtimeKeys, services.teams, services.runtimeAdmins);
  const prices = createPriceBook(config.metering.prices);
  const models = createModels(
    config,
    { teams: services.teams, owners: services.ownership, ownershipOn: policy.enabled, onRefreshError: (err) => services.logger.warn({ err }, 'an upstream\'s model list could not be refreshed; the previous one is served') },
    previous,
  );
  // Built once nothing else can refuse the configuration: a pool starts timers (health checks) and keeps sockets.
  const events = upstreamEventsOf(services.metrics);
  const upstreams = Object.fromEntries(Object.entries(config.upstreams).map(([name, upstream]) => [name, createUpstream(name, upstream, events)]));
  const chatChecker =
    previous && checkerSettings(previous.config) === checkerSettings(config)
      ? previous.chatChecker
      : createChatBodyChecker({ defaultCompletionTokens: config.rateLimits.defaultCompletionTokens, forceStreamUsage: config.metering.forceStreamUsage });
  const ownership = policy.enabled ? new OwnershipGuard(policy, services.ownership, services.metrics, services.logger) : undefined;
  const routes = routeTableOf(config, previous);
  if (ownership) for (const route of unguardedRoutes(config.routes)) services.logger.warn({ route }, `route ${route} is unguarded: ownership is on, and the gateway checks no resource on it`);
  const v1 = createV1Handler({ ...services, config, authenticator, upstreams, prices, chatChecker, ownership, routes, models });
  return {
    config,
    authenticator,
    prices,
    upstreams,
    chatChecker,
    routes,
    models,
    v1,
    metricsHandler: createMetricsEndpoint(services.metrics, config.metrics.bearerToken),
    route(req, res) {
      const method = req.method ?? 'GET';
      const resolved = routeOf(routes, method, req.url ?? '/');
      if (resolved.refusal === undefined) return v1.handle(req, res, resolved.route);
      // Refused before the pipeline: still a SERVER span (SPEC 18); the caller writes the refusal.
      services.tracing?.refusedBeforeRoute(req, method, resolved.refusal, resolved.template);
      throw resolved.refusal;
    },
  };
}

/** The route table: the previous configuration's when its routes did not change, else compiled anew. */
function routeTableOf(config: Config, previous: Live | undefined): RouteTable {
  if (previous && JSON.stringify(previous.config.routes) === JSON.stringify(config.routes)) return previous.routes;
  return createRouteTable([...ROUTES, ...config.routes.map(configRouteSpec)]);
}

/**
 * Lets go of a configuration's parts once its requests are over: its upstream pools close when
 * their last request ends (no connection is cut), its chat checker when no newer one uses it.
 */
export async function retireLive(retired: Live, successor: Live | undefined): Promise<void> {
  await retired.v1.idle();
  for (const upstream of Object.values(retired.upstreams)) upstream.close();
  if (successor?.chatChecker !== retired.chatChecker) await retired.chatChecker.close();
}

/** Time given to exchanges to complete once their connections are closed, even past the deadline. */
const COMPLETION_FLOOR_MS = 250;

/** Waits for `work` (its failure included) or `ms`, whichever comes first. */
async function settleWithin(work: Promise<unknown>, ms: number): Promise<void> {
  const timer = new AbortController();
  await Promise.race([work.catch(() => undefined), delay(Math.max(0, ms), undefined, { signal: timer.signal }).catch(() => undefined)]);
  timer.abort();
}

/**
 * The running configuration's parts as one part of the gateway: a reload builds the next set
 * (refusing the reload, with nothing changed, when it cannot be built) and retires the previous
 * one once its requests are over; closing waits for the requests in flight, then lets go of the
 * upstream pools and the chat checker.
 */
export class LiveConfiguration implements Part<Config> {
  private readonly retiring = new Set<Promise<void>>();

  private constructor(
    private live: Live,
    private readonly services: Services,
  ) {}

  static async build(config: Config, services: Services): Promise<LiveConfiguration> {
    const built = new LiveConfiguration(await buildLive(config, services), services);
    services.metrics.watchUpstreamTargets(() => built.targetStates());
    return built;
  }

  /** Each target of the running configuration's upstreams: `tollgate_upstream_target_up`. */
  *targetStates(): Iterable<UpstreamTargetState> {
    for (const upstream of Object.values(this.live.upstreams)) {
      for (const { target, state } of upstream.targetStates()) yield { upstream: upstream.name, target, up: state === 'up' };
    }
  }

  /** What new requests run with. */
  get current(): Live {
    return this.live;
  }

  async reconfigure(next: Config): Promise<void> {
    const previous = this.live;
    this.live = await buildLive(next, this.services, previous);
    const retired = retireLive(previous, this.live).finally(() => this.retiring.delete(retired));
    this.retiring.add(retired);
  }

  /** Resolves once no exchange of this or a retired configuration is open. */
  async idle(): Promise<void> {
    await Promise.all([this.live.v1.idle(), ...this.retiring]);
  }

  /**
   * Exchanges cut at the deadline complete (settle, meter, log) a few ticks after their
   * connections close, so they get a short floor past it; then the pools and checker close.
   */
  async close(deadline: number): Promise<void> {
    await settleWithin(this.idle(), Math.max(COMPLETION_FLOOR_MS, deadline - Date.now()));
    await this.live.chatChecker.close();
    for (const upstream of Object.values(this.live.upstreams)) upstream.close();
  }
}
