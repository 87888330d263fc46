import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/index.js';
import type { UsageStore } from '../metering/index.js';
import type { Exchange } from './exchange.js';

export interface CompletionDeps {
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly usageStore: UsageStore;
}

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Runs once per exchange when its response is over (finished or aborted): settles the token
 * reservation and frees the concurrency slot, records usage and metrics, writes the log line.
 */
export function completeExchange(exchange: Exchange, deps: CompletionDeps): void {
  const { metrics } = deps;
  const { route, principal, project, usage } = exchange;
  const durationSeconds = (performance.now() - exchange.startedAt) / 1000;
  const routeMetrics = metrics.forRoute({ route: route.template, method: exchange.method, upstream: route.upstream });
  routeMetrics.requests(exchange.status).inc();
  routeMetrics.duration.observe(durationSeconds);
  routeMetrics.inflight.dec();

  exchange.admission?.finish(exchange.usedTokens);

  const forwarded = exchange.sentAt !== undefined;
  if (forwarded && principal && project) {
    const labels = metrics.teamProject(project.team, project.project);
    if (route.kind === 'chat') {
      const model = exchange.model ?? exchange.usageModel ?? 'unknown';
      deps.usageStore.record({
        day: utcDay(Date.now()),
        team: project.team,
        project: project.project,
        model,
        keyId: principal.id,
        requests: 1,
        prompt_tokens: usage?.prompt_tokens ?? 0,
        completion_tokens: usage?.completion_tokens ?? 0,
        total_tokens: usage?.total_tokens ?? 0,
      });
      if (usage) {
        const modelLabel = metrics.modelLabel(model);
        metrics.tokens.inc({ ...labels, model: modelLabel, type: 'prompt' }, usage.prompt_tokens);
        metrics.tokens.inc({ ...labels, model: modelLabel, type: 'completion' }, usage.completion_tokens);
      }
    } else if (route.trainingJobKind && exchange.method === 'POST' && exchange.status >= 200 && exchange.status < 300) {
      metrics.trainingJobsCreated.inc({ ...labels, kind: route.trainingJobKind });
    }
  }

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
