import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AuthFailure } from '../auth/index.js';
import { EVICTION_REASONS, type ConnectionCounts, type EvictionReason } from '../connections/index.js';
import type { GatewayError } from '../errors.js';
import { LIMIT_NAMES } from '../limit-kinds/index.js';
import { NANOS_PER_UNIT } from '../money.js';
import { PROJECT_FORBIDDEN } from '../projects/index.js';
import { UPSTREAM_ERROR_KINDS, UPSTREAM_RETRY_REASONS, type UpstreamErrorKind, type UpstreamRetryReason } from '../proxy/index.js';

/** `route` is always the route template (e.g. `/v1/preview/models/{model_id}`), never a raw path. */
export interface RequestLabels {
  route: string;
  method: string;
  upstream: string;
}
export interface TeamProject {
  team: string;
  project: string;
}

interface Inc {
  inc(value?: number): void;
}
interface Observe {
  observe(value: number): void;
}

/** The series of one route/method/upstream, bound once: the hot path records without building label objects. */
export interface RouteMetrics {
  /** The `upstream` label these series carry. */
  readonly upstream: string;
  /** `tollgate_requests_total` child for this status (cached per status code). */
  requests(status: number): Inc;
  readonly duration: Observe;
  readonly ttfb: Observe;
  readonly overhead: Observe;
  readonly inflight: Inc & { dec(value?: number): void };
  readonly validationFailures: Inc;
  /** A request of this route arrived (in flight until finished()). */
  started(): void;
  /** It is over: counted under the status the client saw, with its whole duration. */
  finished(status: number, seconds: number): void;
}

/** What the gateway records, in its own words; prom-client stays inside this module. */
export interface Metrics {
  readonly registry: Registry;
  /** The series of one route (built on first use and reused). */
  forRoute(labels: RequestLabels): RouteMetrics;
  /**
   * The team/project label pair to record, bounded by `maxTeamProjects`: pairs seen before the
   * limit keep their names, later ones become `__other__`. Returns a shared object (no allocation).
   */
  teamProject(team: string, project: string): TeamProject;
  /** The `model` label to record, bounded by `maxModels` (model names come from clients). */
  modelLabel(model: string): string;
  recordTokens(team: string, project: string, model: string, tokens: { prompt_tokens: number; completion_tokens: number }): void;
  /** Cost in nano-units of the price currency; exported in currency units. */
  recordCost(team: string, project: string, model: string, costNanos: number): void;
  recordTrainingJob(team: string, project: string, kind: string): void;
  recordAuthFailure(reason: string): void;
  /** A request refused by the gateway: counted as an auth failure when that is what it is (401, 403 project). */
  recordRefusal(error: GatewayError): void;
  recordRejection(scope: string, limit: string): void;
  recordUpstreamError(upstream: string, kind: UpstreamErrorKind): void;
  /** A target of an upstream pool joined (start-up, reload): its ejection series starts at 0. */
  recordUpstreamTarget(upstream: string, target: string): void;
  /** A target taken out after failures in a row (SPEC 19). */
  recordUpstreamEjection(upstream: string, target: string): void;
  /** A request sent again to another target: `connect` (never reached one), `reset`, `status` (502/503/504 to a GET/HEAD). */
  recordUpstreamRetry(upstream: string, reason: UpstreamRetryReason): void;
  /** Reports each target's state as `tollgate_upstream_target_up` at every scrape. */
  watchUpstreamTargets(read: () => Iterable<UpstreamTargetState>): void;
  recordStoreError(store: string): void;
  /** A call to the durable store (database) failed. */
  recordDatabaseError(): void;
  /** A usage ledger row was given up: the database was away past the buffer. */
  recordUsageRowDropped(): void;
  /** Spans the tracer gave up: its export queue was full, or the collector failed or timed out (SPEC 18). */
  recordTraceSpansDropped(count: number): void;
  recordConfigReload(result: 'ok' | 'error'): void;
  /** A request refused because the resource (model or training job) is not the caller's team's. */
  /** `kind`: model, training_job or a kind a config route names (a bounded set: the configuration's). */
  recordOwnershipDenial(kind: string): void;
  /** A model refused to its caller (SPEC 21), by the scope that refused it: key, team, jwt, ownership. */
  recordModelDenial(scope: string): void;
  /** A chat sent on to a fallback model (SPEC 22): `reason` is the upstream's status or the failure (connect, reset, timeout). */
  recordModelFallback(from: string, to: string, reason: string): void;
  /** A 2xx creation whose answer had no id at its route's pointer: nothing was recorded (SPEC 23). */
  recordOwnershipUnrecorded(kind: string): void;
  /** Reports `read()` as `tollgate_buffered_body_bytes` at every scrape (no cost per request). */
  watchBufferedBytes(read: () => number): void;
  /** Reports the open client connections and their cap at every scrape. */
  watchConnections(counts: ConnectionCounts): void;
  /** A client connection closed by the gateway under pressure or to make room at the cap. */
  recordConnectionEvicted(reason: EvictionReason): void;
  /** A new client connection closed at once: at the cap with every connection busy. */
  recordConnectionRefused(): void;
  /** The exposition text; concurrent scrapes share one rendering. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** One target of an upstream pool as the target_up gauge shows it. */
export interface UpstreamTargetState {
  readonly upstream: string;
  readonly target: string;
  readonly up: boolean;
}

/**
 * Label values known before any request: their series are created at 0 so that the first
 * error after start-up shows as an increase (a series born at 1 has no increase to rate()).
 * Limit names and upstream error kinds come from their own tables.
 */
export interface KnownLabels {
  readonly upstreams: readonly string[];
  readonly authFailureReasons: readonly string[];
  readonly stores: readonly string[];
}

const LIMIT_SCOPES = ['key', 'project', 'team'] as const;

export interface MetricsOptions {
  /** Series to create at zero (see KnownLabels). */
  knownLabels?: KnownLabels;
  /** Distinct team/project pairs kept as labels before overflowing to `__other__` (SPEC 3: 500). */
  maxTeamProjects?: number;
  /** Distinct model names kept as labels before overflowing to `__other__` (default 200). */
  maxModels?: number;
  /**
   * Where the exposition text comes from, given this process's registry: by default that
   * registry alone; a cluster worker answers with every worker's series aggregated.
   */
  exposition?: (local: Registry) => () => Promise<string>;
}

/** LLM calls range from a cached 5 ms answer to multi-minute generations; the top bucket matches proxy timeouts. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300,
];
/** Gateway overhead is expected in tens of microseconds; anything past 100 ms is a problem worth seeing. */
export const OVERHEAD_BUCKETS: readonly number[] = [
  0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
];

export const OTHER_LABEL = '__other__';

/**
 * prom-client's gauges named `*_total` fail `promtool check metrics` (SPEC 8); each is the sum of
 * its per-type sibling (`nodejs_active_handles` etc.), which stays.
 */
const MISNAMED_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: L[]): Counter<L> {
  return new Counter({ name, help, labelNames, registers: [registry] });
}

function histogram<L extends string>(registry: Registry, name: string, help: string, labelNames: L[], buckets: readonly number[]): Histogram<L> {
  return new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [registry] });
}

/** Values read only when Prometheus scrapes (gauges with a collect callback). */
interface ScrapeTimeReaders {
  bufferedBytes: () => number;
  upstreamTargets: () => Iterable<UpstreamTargetState>;
  connections: ConnectionCounts;
}

/** The per-route request series (bound once per route by bindRoute). */
function requestHandles(registry: Registry) {
  return {
    requests: counter(registry, 'tollgate_requests_total',
      'Requests answered by the gateway, by route template, method, response status and upstream.',
      ['route', 'method', 'status', 'upstream']),
    requestDuration: histogram(registry, 'tollgate_request_duration_seconds',
      'Time from request arrival until the response (including a streamed body) finished, in seconds.',
      ['route', 'method', 'upstream'], LATENCY_BUCKETS),
    upstreamTtfb: histogram(registry, 'tollgate_upstream_ttfb_seconds',
      'Time from sending a request upstream until its response headers arrived, in seconds.',
      ['route', 'upstream'], LATENCY_BUCKETS),
    overhead: histogram(registry, 'tollgate_overhead_seconds',
      'Gateway time spent on a request before it leaves for the upstream (auth, limits, validation), in seconds.',
      ['route'], OVERHEAD_BUCKETS),
    validationFailures: counter(registry, 'tollgate_validation_failures_total',
      'Request bodies rejected with 422 before reaching an upstream, by route template.',
      ['route']),
    inflight: new Gauge({
      name: 'tollgate_inflight_requests',
      help: 'Requests currently being handled by this instance, by route template.',
      labelNames: ['route'],
      registers: [registry],
    }),
  };
}

/** What teams and projects consumed: tokens, their cost, training jobs. */
function usageHandles(registry: Registry) {
  return {
    tokens: counter(registry, 'tollgate_tokens_total',
      'Tokens metered from upstream usage, by team, project, model and type (prompt or completion).',
      ['team', 'project', 'model', 'type']),
    cost: counter(registry, 'tollgate_cost_total',
      'Cost of metered usage in the price currency (metering.prices.currency), by team, project and model.',
      ['team', 'project', 'model']),
    trainingJobsCreated: counter(registry, 'tollgate_training_jobs_created_total',
      'Training jobs created through the gateway (successful POST), by team, project and kind.',
      ['team', 'project', 'kind']),
  };
}

/** Requests the gateway refused because of who asked or how much: rate limits, auth, ownership. */
function refusalHandles(registry: Registry) {
  return {
    rateLimitRejections: counter(registry, 'tollgate_ratelimit_rejections_total',
      'Requests rejected with 429, by limit scope (key, project) and the limit that was hit.',
      ['scope', 'limit']),
    authFailures: counter(registry, 'tollgate_auth_failures_total',
      'Requests rejected by authentication or project permission checks, by reason.',
      ['reason']),
    ownershipDenials: counter(registry, 'tollgate_ownership_denials_total',
      'Requests refused because the model or training job is not the caller team\'s (or is unknown, with ownership.unknown: deny), by kind.',
      ['kind']),
    modelDenials: counter(registry, 'tollgate_model_denials_total',
      'Requests refused a model the caller may not use (answered as an unknown model), by the scope that refused it.',
      ['scope']),
    modelFallbacks: counter(registry, 'tollgate_model_fallbacks_total',
      'Chats sent on to a fallback model because the upstream answered 429/5xx or could not be reached before any byte reached the client.',
      ['from', 'to', 'reason']),
    ownershipUnrecorded: counter(registry, 'tollgate_ownership_unrecorded_total',
      'Creations answered 2xx with no id at the route\'s pointer (creates: { id }): nothing recorded, so the caller\'s own resource is unknown to the gateway, by kind.',
      ['kind']),
  };
}

/** What went wrong around the gateway: upstreams, stores, the database, configuration reloads. */
function failureHandles(registry: Registry, readers: ScrapeTimeReaders) {
  return {
    upstreamTargetUp: new Gauge({
      name: 'tollgate_upstream_target_up',
      help: 'Whether a target of an upstream takes traffic (1) or is ejected (0), by upstream and target (host:port).',
      labelNames: ['upstream', 'target'],
      registers: [registry],
      // Across cluster workers (each ejects on its own): 0 when any of them has the target out.
      aggregator: 'min',
      // Read at scrape time from the running configuration: a reload's removed targets disappear.
      collect() {
        this.reset();
        for (const { upstream, target, up } of readers.upstreamTargets()) this.set({ upstream, target }, up ? 1 : 0);
      },
    }),
    upstreamErrors: counter(registry, 'tollgate_upstream_errors_total',
      'Upstream requests that failed: no response (connect, timeout, reset) or a response body that stalled and was cut (idle), by upstream and kind.',
      ['upstream', 'kind']),
    upstreamEjections: counter(registry, 'tollgate_upstream_ejections_total',
      'Times a target of an upstream was taken out after failures in a row (connect error, reset, timeout, 502/503/504), by upstream and target (host:port).',
      ['upstream', 'target']),
    upstreamRetries: counter(registry, 'tollgate_upstream_retries_total',
      'Upstream requests sent again to another target, by upstream and reason: connect (never reached a target), reset or status (a GET/HEAD answered 502/503/504, nothing yet relayed).',
      ['upstream', 'reason']),
    storeErrors: counter(registry, 'tollgate_store_errors_total',
      'Failed operations against a limits or usage store (e.g. Redis), by store.',
      ['store']),
    databaseErrors: counter(registry, 'tollgate_database_errors_total',
      'Failed calls to the durable store (PostgreSQL or SQLite): key and ownership loads, ledger and audit writes, admin reads and writes.',
      []),
    usageRowsDropped: counter(registry, 'tollgate_usage_rows_dropped_total',
      'Usage ledger rows given up because the database was away longer than the bounded buffer could hold (each is also logged).',
      []),
    traceSpansDropped: counter(registry, 'tollgate_trace_spans_dropped_total',
      'Spans given up by the tracer: its export queue was full, or the collector was down, slow or refused them. Requests are never held for a span.',
      []),
    configReloads: counter(registry, 'tollgate_config_reloads_total',
      'Configuration reloads (SIGHUP or POST /admin/config/reload), by result: ok, or error (the running configuration stayed).',
      ['result']),
  };
}

/** How close this instance is to its memory and connection caps, and what it shed to stay under them. */
function capacityHandles(registry: Registry, readers: ScrapeTimeReaders) {
  return {
    bufferedBodyBytes: new Gauge({
      name: 'tollgate_buffered_body_bytes',
      help: 'Bytes of request bodies this instance holds in memory right now (chat bodies read for validation); bounded by server.maxBufferedBytes.',
      registers: [registry],
      // Called just before rendering: the gauge costs nothing per request.
      collect() {
        this.set(readers.bufferedBytes());
      },
    }),
    clientConnections: new Gauge({
      name: 'tollgate_client_connections',
      help: 'Client connections this instance holds open right now; from 80% of tollgate_client_connections_max the gateway sheds waiting ones.',
      registers: [registry],
      collect() {
        this.set(readers.connections.open);
      },
    }),
    clientConnectionsMax: new Gauge({
      name: 'tollgate_client_connections_max',
      help: 'The most client connections this instance holds open (server.maxConnections, or derived from the open-file limit).',
      registers: [registry],
      collect() {
        this.set(readers.connections.maxConnections);
      },
    }),
    connectionsEvicted: counter(registry, 'tollgate_connections_evicted_total',
      'Client connections closed by the gateway while waiting for a request, by reason: cap_idle and cap_headers (closed to admit a new connection at the cap), pressure_idle and pressure_headers (waited past server.pressureHeadersTimeoutMs under pressure); idle: between keep-alive requests, headers: no request completed yet.',
      ['reason']),
    connectionsRefused: counter(registry, 'tollgate_connections_refused_total',
      'New client connections closed at once because the cap was reached and every open connection had a request in progress.',
      []),
  };
}

/** Every gateway series, registered once on `registry` (exposition lists them in this order). */
function createHandles(registry: Registry, readers: ScrapeTimeReaders) {
  return {
    ...requestHandles(registry),
    ...usageHandles(registry),
    ...refusalHandles(registry),
    ...failureHandles(registry, readers),
    ...capacityHandles(registry, readers),
  };
}

type Handles = ReturnType<typeof createHandles>;

function bindRoute(handles: Handles, labels: RequestLabels): RouteMetrics {
  const byStatus = new Map<number, Inc>();
  const route = { route: labels.route };
  const requests = (status: number): Inc => {
    let child = byStatus.get(status);
    if (!child) {
      child = handles.requests.labels({ ...labels, status });
      byStatus.set(status, child);
    }
    return child;
  };
  const duration = handles.requestDuration.labels(labels);
  const inflight = handles.inflight.labels(route);
  return {
    upstream: labels.upstream,
    requests,
    duration,
    ttfb: handles.upstreamTtfb.labels({ route: labels.route, upstream: labels.upstream }),
    overhead: handles.overhead.labels(route),
    inflight,
    validationFailures: handles.validationFailures.labels(route),
    started: () => inflight.inc(),
    finished(status, seconds) {
      requests(status).inc();
      duration.observe(seconds);
      inflight.dec();
    },
  };
}

/** Route metrics by method, then template, then upstream: found without building a key string. */
function routeCache(handles: Handles): (labels: RequestLabels) => RouteMetrics {
  const cache = new Map<string, Map<string, Map<string, RouteMetrics>>>();
  return (labels) => {
    let byRoute = cache.get(labels.method);
    if (!byRoute) cache.set(labels.method, (byRoute = new Map()));
    let byUpstream = byRoute.get(labels.route);
    if (!byUpstream) byRoute.set(labels.route, (byUpstream = new Map()));
    let bound = byUpstream.get(labels.upstream);
    if (!bound) byUpstream.set(labels.upstream, (bound = bindRoute(handles, { ...labels })));
    return bound;
  };
}

function modelGuard(max: number): (model: string) => string {
  const known = new Set<string>();
  return (model) => {
    if (known.has(model)) return model;
    if (known.size >= max) return OTHER_LABEL;
    known.add(model);
    return model;
  };
}

function teamProjectGuard(max: number): (team: string, project: string) => TeamProject {
  const other: TeamProject = Object.freeze({ team: OTHER_LABEL, project: OTHER_LABEL });
  // Nested maps: no key string is built per lookup.
  const byTeam = new Map<string, Map<string, TeamProject>>();
  let size = 0;
  return (team, project) => {
    let projects = byTeam.get(team);
    const known = projects?.get(project);
    if (known) return known;
    if (size >= max) return other;
    if (!projects) {
      projects = new Map();
      byTeam.set(team, projects);
    }
    const pair: TeamProject = Object.freeze({ team, project });
    projects.set(project, pair);
    size += 1;
    return pair;
  };
}

/**
 * `tollgate_tokens_total` children per team/project pair and model, bound once: a labelled
 * inc() validates and hashes its label object on every call. Bounded by the label guards
 * (teamProject() hands out one shared object per pair).
 */
function tokenCounters(handles: Handles): (pair: TeamProject, model: string) => { prompt: Inc; completion: Inc } {
  const byPair = new WeakMap<TeamProject, Map<string, { prompt: Inc; completion: Inc }>>();
  return (pair, model) => {
    let byModel = byPair.get(pair);
    if (!byModel) byPair.set(pair, (byModel = new Map()));
    let children = byModel.get(model);
    if (!children) {
      children = {
        prompt: handles.tokens.labels({ ...pair, model, type: 'prompt' }),
        completion: handles.tokens.labels({ ...pair, model, type: 'completion' }),
      };
      byModel.set(model, children);
    }
    return children;
  };
}

/** The reason label of an auth failure, or undefined for refusals that are not about who is calling. */
function authFailureReason(error: GatewayError): string | undefined {
  if (error instanceof AuthFailure) return error.reason;
  return error.code === PROJECT_FORBIDDEN ? PROJECT_FORBIDDEN : undefined;
}

function zeroKnownSeries(handles: Handles, known: KnownLabels): void {
  // inc(…, 0) creates the series; labels() alone does not.
  for (const scope of LIMIT_SCOPES) for (const limit of LIMIT_NAMES) handles.rateLimitRejections.inc({ scope, limit }, 0);
  for (const upstream of known.upstreams) for (const kind of UPSTREAM_ERROR_KINDS) handles.upstreamErrors.inc({ upstream, kind }, 0);
  for (const upstream of known.upstreams) for (const reason of UPSTREAM_RETRY_REASONS) handles.upstreamRetries.inc({ upstream, reason }, 0);
  for (const reason of known.authFailureReasons) handles.authFailures.inc({ reason }, 0);
  for (const store of known.stores) handles.storeErrors.inc({ store }, 0);
  for (const result of ['ok', 'error'] as const) handles.configReloads.inc({ result }, 0);
  for (const kind of ['model', 'training_job'] as const) {
    handles.ownershipDenials.inc({ kind }, 0);
    handles.ownershipUnrecorded.inc({ kind }, 0);
  }
  for (const reason of EVICTION_REASONS) handles.connectionsEvicted.inc({ reason }, 0);
}

/** What a team/project used (tokens, cost, training jobs), its labels kept within the series caps. */
function usageRecorders(handles: Handles, options: MetricsOptions): Pick<Metrics, 'teamProject' | 'modelLabel' | 'recordTokens' | 'recordCost' | 'recordTrainingJob'> {
  const teamProject = teamProjectGuard(options.maxTeamProjects ?? 500);
  const modelLabel = modelGuard(options.maxModels ?? 200);
  const tokensOf = tokenCounters(handles);
  return {
    teamProject,
    modelLabel,
    recordTokens(team, project, model, tokens) {
      const counters = tokensOf(teamProject(team, project), modelLabel(model));
      counters.prompt.inc(tokens.prompt_tokens);
      counters.completion.inc(tokens.completion_tokens);
    },
    recordCost: (team, project, model, costNanos) =>
      handles.cost.inc({ ...teamProject(team, project), model: modelLabel(model) }, costNanos / NANOS_PER_UNIT),
    recordTrainingJob: (team, project, kind) => handles.trainingJobsCreated.inc({ ...teamProject(team, project), kind }),
  };
}

/** Builds the gateway's metrics on a private registry (never prom-client's global one). */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  const readers: ScrapeTimeReaders = { bufferedBytes: () => 0, upstreamTargets: () => [], connections: { open: 0, maxConnections: 0 } };
  const handles = createHandles(registry, readers);
  if (options.knownLabels) zeroKnownSeries(handles, options.knownLabels);
  const expose = options.exposition?.(registry) ?? (() => registry.metrics());
  let rendering: Promise<string> | null = null;
  return {
    registry,
    forRoute: routeCache(handles),
    ...usageRecorders(handles, options),
    recordAuthFailure: (reason) => handles.authFailures.inc({ reason }),
    recordRefusal(error) {
      const reason = authFailureReason(error);
      if (reason !== undefined) handles.authFailures.inc({ reason });
    },
    recordRejection: (scope, limit) => handles.rateLimitRejections.inc({ scope, limit }),
    recordUpstreamError: (upstream, kind) => handles.upstreamErrors.inc({ upstream, kind }),
    recordUpstreamTarget: (upstream, target) => handles.upstreamEjections.inc({ upstream, target }, 0),
    recordUpstreamEjection: (upstream, target) => handles.upstreamEjections.inc({ upstream, target }),
    recordUpstreamRetry: (upstream, reason) => handles.upstreamRetries.inc({ upstream, reason }),
    watchUpstreamTargets(read) {
      readers.upstreamTargets = read;
    },
    recordStoreError: (store) => handles.storeErrors.inc({ store }),
    recordDatabaseError: () => handles.databaseErrors.inc(),
    recordUsageRowDropped: () => handles.usageRowsDropped.inc(),
    recordTraceSpansDropped: (count) => handles.traceSpansDropped.inc(count),
    recordConfigReload: (result) => handles.configReloads.inc({ result }),
    recordOwnershipDenial: (kind) => handles.ownershipDenials.inc({ kind }),
    recordModelDenial: (scope) => handles.modelDenials.inc({ scope }),
    recordModelFallback: (from, to, reason) => handles.modelFallbacks.inc({ from, to, reason }),
    recordOwnershipUnrecorded: (kind) => handles.ownershipUnrecorded.inc({ kind }),
    watchBufferedBytes(read) {
      readers.bufferedBytes = read;
    },
    watchConnections(counts) {
      readers.connections = counts;
    },
    recordConnectionEvicted: (reason) => handles.connectionsEvicted.inc({ reason }),
    recordConnectionRefused: () => handles.connectionsRefused.inc(),
    async render() {
      // A burst of scrapes (several Prometheus replicas) costs one serialisation.
      rendering ??= expose().finally(() => {
        rendering = null;
      });
      return { contentType: registry.contentType, body: await rendering };
    },
  };
}
