import type { Logger } from '../observability/logger.js';
import type { Metrics, TeamProject } from '../observability/index.js';
import { utcDay, type UsageStore } from '../metering/index.js';
import type { Exchange } from './exchange.js';

export interface CompletionDeps {
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly usageStore: UsageStore;
}

const DAY_MS = 86_400_000;
let cachedDayNumber = -1;
let cachedDay = '';

/** utcDay() of now, formatted once per UTC day rather than per request. */
function today(): string {
  const now = Date.now();
  const dayNumber = Math.floor(now / DAY_MS);
  if (dayNumber !== cachedDayNumber) {
    cachedDayNumber = dayNumber;
    cachedDay = utcDay(now);
  }
  return cachedDay;
}

type TokenChildren = Readonly<Record<'prompt' | 'completion', { inc(value?: number): void }>>;

/**
 * The `tollgate_tokens_total` children of a team/project and model label, bound once: a
 * labelled inc() validates and hashes its label object on every call. Bounded by the
 * metrics' own label guards (teamProject() hands out one shared object per pair).
 */
const tokenChildren = new WeakMap<Metrics, WeakMap<TeamProject, Map<string, TokenChildren>>>();

function tokenCountersFor(metrics: Metrics, labels: TeamProject, model: string): TokenChildren {
  let byPair = tokenChildren.get(metrics);
  if (!byPair) {
    byPair = new WeakMap();
    tokenChildren.set(metrics, byPair);
  }
  let byModel = byPair.get(labels);
  if (!byModel) {
    byModel = new Map();
    byPair.set(labels, byModel);
  }
  let children = byModel.get(model);
  if (!children) {
    children = {
      prompt: metrics.tokens.labels({ ...labels, model, type: 'prompt' }),
      completion: metrics.tokens.labels({ ...labels, model, type: 'completion' }),
    };
    byModel.set(model, children);
  }
  return children;
}

/**
 * Runs once per exchange when its response is over (finished or aborted): settles the token
 * reservation and frees the concurrency slot, records usage and metrics, writes the log line.
 */
export function completeExchange(exchange: Exchange, deps: CompletionDeps): void {
  const durationSeconds = (performance.now() - exchange.startedAt) / 1000;
  const routeMetrics = exchange.metrics;
  routeMetrics.requests(exchange.status).inc();
  routeMetrics.duration.observe(durationSeconds);
  routeMetrics.inflight.dec();

  exchange.admission?.finish(exchange.usedTokens);
  if (exchange.sentAt !== undefined) meterExchange(exchange, deps);
  logExchange(exchange, deps, durationSeconds);
}

/**
 * Records a forwarded exchange in the usage store and the token/job metrics. Chat requests are
 * recorded under the model the client asked for, with the upstream's reported tokens (zero when
 * none were reported: never guessed); other metered routes as requests under "<METHOD> <route>".
 */
function meterExchange(exchange: Exchange, deps: CompletionDeps): void {
  const { metrics } = deps;
  const { route, principal, project, usage } = exchange;
  if (!principal || !project || route.kind === 'health') return;
  const model = route.kind === 'chat' ? exchange.model ?? exchange.usageModel ?? 'unknown' : `${exchange.method} ${route.template}`;
  deps.usageStore.record({
    day: today(),
    team: project.team,
    project: project.project,
    model,
    keyId: principal.id,
    requests: 1,
    prompt_tokens: usage?.prompt_tokens ?? 0,
    completion_tokens: usage?.completion_tokens ?? 0,
    total_tokens: usage?.total_tokens ?? 0,
  });
  const labels = metrics.teamProject(project.team, project.project);
  if (usage) {
    const counters = tokenCountersFor(metrics, labels, metrics.modelLabel(model));
    counters.prompt.inc(usage.prompt_tokens);
    counters.completion.inc(usage.completion_tokens);
  }
  if (route.trainingJobKind && exchange.method === 'POST' && exchange.status >= 200 && exchange.status < 300) {
    metrics.trainingJobsCreated.inc({ ...labels, kind: route.trainingJobKind });
  }
}

/** The one structured line per request: what an operator needs, never a credential. */
function logExchange(exchange: Exchange, deps: CompletionDeps, durationSeconds: number): void {
  // The line's object is built only when it will be written (LOG_LEVEL=warn or silent: never).
  if (!deps.logger.isLevelEnabled('info')) return;
  const { route, principal, project, usage } = exchange;
  const forwarded = exchange.sentAt !== undefined;
  deps.logger.info(
    {
      requestId: exchange.id,
      route: route.template,
      method: exchange.method,
      status: exchange.status,
      durationMs: Math.round(durationSeconds * 1e4) / 10,
      overheadMs: exchange.sentAt === undefined ? undefined : Math.round((exchange.sentAt - exchange.startedAt) * 10) / 10,
      ttfbMs: exchange.respondedAt === undefined || exchange.sentAt === undefined ? undefined : Math.round((exchange.respondedAt - exchange.sentAt) * 10) / 10,
      team: project?.team,
      project: project?.project,
      keyId: principal?.id,
      model: exchange.model ?? exchange.usageModel,
      promptTokens: usage?.prompt_tokens,
      completionTokens: usage?.completion_tokens,
      totalTokens: usage?.total_tokens,
      aborted: forwarded && !exchange.completed ? true : undefined,
      error: exchange.errorCode,
    },
    'request',
  );
}
