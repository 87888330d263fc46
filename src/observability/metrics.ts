import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Token direction in `tollgate_tokens_total{type}`. */
export type TokenType = 'prompt' | 'completion';
/** What went wrong talking to an upstream, in `tollgate_upstream_errors_total{kind}`. */
export type UpstreamErrorKind = 'connect' | 'timeout' | 'reset';

/** A counter whose every call must carry the full label set `L`. */
export interface CounterOf<L> {
  inc(labels: L, value?: number): void;
  labels(labels: L): { inc(value?: number): void };
}
/** A gauge whose every call must carry the full label set `L`. */
export interface GaugeOf<L> {
  inc(labels: L, value?: number): void;
  dec(labels: L, value?: number): void;
  set(labels: L, value: number): void;
  labels(labels: L): { inc(value?: number): void; dec(value?: number): void; set(value: number): void };
}
/** A histogram whose every call must carry the full label set `L`. */
export interface HistogramOf<L> {
  observe(labels: L, value: number): void;
  labels(labels: L): { observe(value: number): void };
}

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

/** Pre-bound children for one route/method/upstream: the hot path records without building label objects. */
export interface RouteMetrics {
  /** `tollgate_requests_total` child for this status (cached per status code). */
  requests(status: number): { inc(value?: number): void };
  readonly duration: { observe(seconds: number): void };
  readonly ttfb: { observe(seconds: number): void };
  readonly overhead: { observe(seconds: number): void };
  readonly inflight: { inc(value?: number): void; dec(value?: number): void };
  readonly validationFailures: { inc(value?: number): void };
}

export interface Metrics {
  readonly registry: Registry;
  readonly requests: CounterOf<RequestLabels & { status: number }>;
  readonly requestDuration: HistogramOf<RequestLabels>;
  readonly upstreamTtfb: HistogramOf<{ route: string; upstream: string }>;
  readonly overhead: HistogramOf<{ route: string }>;
  readonly tokens: CounterOf<TeamProject & { model: string; type: TokenType }>;
  readonly rateLimitRejections: CounterOf<{ scope: string; limit: string }>;
  readonly authFailures: CounterOf<{ reason: string }>;
  readonly validationFailures: CounterOf<{ route: string }>;
  readonly inflight: GaugeOf<{ route: string }>;
  readonly upstreamErrors: CounterOf<{ upstream: string; kind: UpstreamErrorKind }>;
  readonly storeErrors: CounterOf<{ store: string }>;
  readonly trainingJobsCreated: CounterOf<TeamProject & { kind: string }>;
  /** Children for one route, built on first use and reused (call at app build time). */
  forRoute(labels: RequestLabels): RouteMetrics;
  /**
   * The team/project label pair to record, bounded by `maxTeamProjects`: pairs seen before the
   * limit keep their names, later ones become `__other__`. Returns a shared object (no allocation).
   */
  teamProject(team: string, project: string): TeamProject;
  /**
   * The `model` label to record, bounded by `maxModels`: model names come from clients, so the
   * first `maxModels` distinct names keep their label and later ones become `__other__`.
   */
  modelLabel(model: string): string;
  /** The exposition text; concurrent scrapes share one rendering. */
  render(): Promise<{ contentType: string; body: string }>;
}

/**
 * Label values known before any request: their series are created at 0 so that the first
 * error after start-up shows as an increase (a series born at 1 has no increase to rate()).
 */
export interface KnownLabels {
  readonly upstreams: readonly string[];
  readonly authFailureReasons: readonly string[];
  readonly stores: readonly string[];
}

const LIMIT_SCOPES = ['key', 'project'] as const;
const LIMIT_NAMES = ['rpm', 'tpm', 'concurrency', 'tokensPerDay'] as const;
const UPSTREAM_ERROR_KINDS: readonly UpstreamErrorKind[] = ['connect', 'timeout', 'reset'];

export interface MetricsOptions {
  /** Series to create at zero (see KnownLabels). */
  knownLabels?: KnownLabels;
  /** Distinct team/project pairs kept as labels before overflowing to `__other__` (SPEC 3: 500). */
  maxTeamProjects?: number;
  /** Distinct model names kept as labels before overflowing to `__other__` (default 200). */
  maxModels?: number;
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
const MISNAMED_DEFAULT_METRICS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: L[]): Counter<L> {
  return new Counter({ name, help, labelNames, registers: [registry] });
}

function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: L[],
  buckets: readonly number[],
): Histogram<L> {
  return new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [registry] });
}

function createHandles(registry: Registry) {
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
    tokens: counter(registry, 'tollgate_tokens_total',
      'Tokens metered from upstream usage, by team, project, model and type (prompt or completion).',
      ['team', 'project', 'model', 'type']),
    rateLimitRejections: counter(registry, 'tollgate_ratelimit_rejections_total',
      'Requests rejected with 429, by limit scope (key, project) and the limit that was hit.',
      ['scope', 'limit']),
    authFailures: counter(registry, 'tollgate_auth_failures_total',
      'Requests rejected by authentication or project permission checks, by reason.',
      ['reason']),
    validationFailures: counter(registry, 'tollgate_validation_failures_total',
      'Request bodies rejected with 422 before reaching an upstream, by route template.',
      ['route']),
    inflight: new Gauge({
      name: 'tollgate_inflight_requests',
      help: 'Requests currently being handled by this instance, by route template.',
      labelNames: ['route'],
      registers: [registry],
    }),
    upstreamErrors: counter(registry, 'tollgate_upstream_errors_total',
      'Upstream requests that failed without a response, by upstream and kind (connect, timeout, reset).',
      ['upstream', 'kind']),
    storeErrors: counter(registry, 'tollgate_store_errors_total',
      'Failed operations against a limits or usage store (e.g. Redis), by store.',
      ['store']),
    trainingJobsCreated: counter(registry, 'tollgate_training_jobs_created_total',
      'Training jobs created through the gateway (successful POST), by team, project and kind.',
      ['team', 'project', 'kind']),
  };
}

type Handles = ReturnType<typeof createHandles>;

function routeMetricsFactory(handles: Handles): (labels: RequestLabels) => RouteMetrics {
  const cache = new Map<string, RouteMetrics>();
  return (labels) => {
    const key = `${labels.method} ${labels.route} ${labels.upstream}`;
    const cached = cache.get(key);
    if (cached) return cached;
    const byStatus = new Map<number, { inc(value?: number): void }>();
    const route = { route: labels.route };
    const built: RouteMetrics = {
      requests(status) {
        let child = byStatus.get(status);
        if (!child) {
          child = handles.requests.labels({ ...labels, status });
          byStatus.set(status, child);
        }
        return child;
      },
      duration: handles.requestDuration.labels(labels),
      ttfb: handles.upstreamTtfb.labels({ route: labels.route, upstream: labels.upstream }),
      overhead: handles.overhead.labels(route),
      inflight: handles.inflight.labels(route),
      validationFailures: handles.validationFailures.labels(route),
    };
    cache.set(key, built);
    return built;
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

/** Builds the gateway's metrics on a private registry (never prom-client's global one). */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  const handles = createHandles(registry);
  const known = options.knownLabels;
  if (known) {
    // inc(…, 0) creates the series; labels() alone does not.
    for (const scope of LIMIT_SCOPES) for (const limit of LIMIT_NAMES) handles.rateLimitRejections.inc({ scope, limit }, 0);
    for (const upstream of known.upstreams) for (const kind of UPSTREAM_ERROR_KINDS) handles.upstreamErrors.inc({ upstream, kind }, 0);
    for (const reason of known.authFailureReasons) handles.authFailures.inc({ reason }, 0);
    for (const store of known.stores) handles.storeErrors.inc({ store }, 0);
  }
  let rendering: Promise<string> | null = null;
  return {
    registry,
    ...handles,
    forRoute: routeMetricsFactory(handles),
    teamProject: teamProjectGuard(options.maxTeamProjects ?? 500),
    modelLabel: modelGuard(options.maxModels ?? 200),
    async render() {
      // A burst of scrapes (several Prometheus replicas) costs one serialisation.
      rendering ??= registry.metrics().finally(() => {
        rendering = null;
      });
      return { contentType: registry.contentType, body: await rendering };
    },
  };
}
