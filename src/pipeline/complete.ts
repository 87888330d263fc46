import { UtcLabels } from '../calendar.js';
import type { UsageStore } from '../metering/index.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/index.js';
import type { Exchange, UpstreamLeg } from './exchange.js';

export interface CompletionDeps {
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly usageStore: UsageStore;
}

const labels = new UtcLabels();

/**
 * Runs once per exchange when its response is over (finished or aborted): counts it, settles
 * the token reservation and frees the concurrency slot, meters it, writes the log line.
 */
export function completeExchange(exchange: Exchange, deps: CompletionDeps): void {
  const durationSeconds = (performance.now() - exchange.startedAt) / 1000;
  exchange.metrics.finished(exchange.status, durationSeconds);
  exchange.releaseBody?.();
  exchange.admission?.finish(exchange.usedTokens);
  if (exchange.leg) meterExchange(exchange, exchange.leg, deps);
  logExchange(exchange, deps, durationSeconds);
}

/**
 * Records a forwarded exchange as its route's spec says. `tokens`: under the model the client
 * asked for, with the upstream's reported tokens (zero when none were reported: never
 * guessed). `requests`: as a request under "<METHOD> <route>".
 */
function meterExchange(exchange: Exchange, leg: UpstreamLeg, deps: CompletionDeps): void {
  const { route, caller } = exchange;
  if (!caller || route.metering === 'none') return;
  const { team, project } = caller.project;
  const usage = route.metering === 'tokens' ? leg.usage : null;
  const model = route.metering === 'tokens' ? (exchange.chat?.model ?? leg.usageModel ?? 'unknown') : `${exchange.method} ${route.template}`;
  deps.usageStore.record({
    day: labels.day(Date.now()),
    team,
    project,
    model,
    keyId: caller.principal.id,
    requests: 1,
    prompt_tokens: usage?.prompt_tokens ?? 0,
    completion_tokens: usage?.completion_tokens ?? 0,
    total_tokens: usage?.total_tokens ?? 0,
  });
  if (usage) deps.metrics.recordTokens(team, project, model, usage);
  const status = exchange.status;
  if (route.trainingJobKind && exchange.method === 'POST' && status >= 200 && status < 300) {
    deps.metrics.recordTrainingJob(team, project, route.trainingJobKind);
  }
}

const tenths = (ms: number): number => Math.round(ms * 10) / 10;

/** The one structured line per request: what an operator needs, never a credential. */
function logExchange(exchange: Exchange, deps: CompletionDeps, durationSeconds: number): void {
  // The line's object is built only when it will be written (LOG_LEVEL=warn or silent: never).
  if (!deps.logger.isLevelEnabled('info')) return;
  const { route, caller, leg } = exchange;
  const usage = leg?.usage;
  deps.logger.info(
    {
      requestId: exchange.id,
      route: route.template,
      method: exchange.method,
      status: exchange.status,
      durationMs: Math.round(durationSeconds * 1e4) / 10,
      overheadMs: leg === undefined ? undefined : tenths(leg.sentAt - exchange.startedAt),
      ttfbMs: leg?.respondedAt === undefined ? undefined : tenths(leg.respondedAt - leg.sentAt),
      team: caller?.project.team,
      project: caller?.project.project,
      keyId: caller?.principal.id,
      model: exchange.chat?.model ?? leg?.usageModel,
      promptTokens: usage?.prompt_tokens,
      completionTokens: usage?.completion_tokens,
      totalTokens: usage?.total_tokens,
      aborted: leg !== undefined && !leg.completed ? true : undefined,
      error: exchange.errorCode,
    },
    'request',
  );
}
