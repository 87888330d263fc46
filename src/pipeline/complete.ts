import { chargeFor, type Charge, type Ledger, type PriceBook } from '../metering/index.js';
import type { Logger, Metrics } from '../observability/index.js';
import type { Exchange, UpstreamLeg } from './exchange.js';
import { outcomeOf } from './traced.js';

export interface CompletionDeps {
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly ledger: Ledger;
  readonly prices: PriceBook;
}

const NOTHING_CHARGED: Charge = { usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, costNanos: 0, estimated: false };
const INVALID_USAGE_LOG_MS = 60_000;
let invalidUsageLoggedAt = Number.NEGATIVE_INFINITY;

/**
 * Runs once per exchange when its response is over (finished or aborted): counts it, works out
 * what it is charged, settles its reservation to that and frees its concurrency slot, meters it,
 * writes the log line.
 */
export function completeExchange(exchange: Exchange, deps: CompletionDeps): void {
  const durationSeconds = (performance.now() - exchange.startedAt) / 1000;
  exchange.metrics.finished(exchange.status, durationSeconds);
  exchange.body?.release();
  const { leg } = exchange;
  const model = modelOf(exchange, leg);
  // Refused before it reached the upstream: charged nothing (SPEC 6.4).
  const charge = leg ? chargeOf(exchange, leg, model, deps) : NOTHING_CHARGED;
  exchange.admission?.finish({ tokens: charge.usage.total_tokens, costNanos: charge.costNanos });
  if (exchange.route.ledger ?? exchange.route.limited) recordInLedger(exchange, model, charge, deps, durationSeconds);
  if (leg) countUsage(exchange, model, charge, deps);
  exchange.trace?.finish(outcomeOf(exchange, leg ? charge : undefined));
  logExchange(exchange, leg ? charge : undefined, deps, durationSeconds);
}

/** The model a request is metered and priced as: the one that served (an alias's target, a fallback: SPEC 22). */
function modelOf(exchange: Exchange, leg: UpstreamLeg | undefined): string {
  if (exchange.route.metering !== 'tokens') return `${exchange.method} ${exchange.route.template}`;
  return exchange.chat?.model ?? leg?.seen?.model ?? 'unknown';
}

function chargeOf(exchange: Exchange, leg: UpstreamLeg, model: string, deps: CompletionDeps): Charge {
  if (leg.seen?.invalidUsage) reportInvalidUsage(exchange, deps.logger);
  const status = leg.upstreamStatus ?? 0;
  return chargeFor(
    {
      model,
      meteredByTokens: exchange.route.metering === 'tokens',
      answered: status >= 200 && status < 300,
      promptTokens: exchange.chat?.promptTokens ?? 0,
      seen: leg.seen,
    },
    deps.prices,
  );
}

/** An upstream reporting impossible usage is worth one line a minute, not one per request. */
function reportInvalidUsage(exchange: Exchange, logger: Logger): void {
  const now = performance.now();
  if (now - invalidUsageLoggedAt < INVALID_USAGE_LOG_MS) return;
  invalidUsageLoggedAt = now;
  logger.warn(
    { requestId: exchange.id, trace_id: exchange.trace?.traceId, route: exchange.route.template, upstream: exchange.route.upstream },
    'the upstream reported usage that cannot be right (negative, fractional or over 10^9 tokens): ignored, the request is charged an estimate (logged at most once a minute)',
  );
}

/**
 * One ledger row per request on a limited (or `ledger: true`) route whose caller is known (SPEC 14.1): refusals
 * included, at no cost. A request refused before it could be attributed (401, a malformed or
 * forbidden project) has no team to charge and no row.
 */
function recordInLedger(exchange: Exchange, model: string, charge: Charge, deps: CompletionDeps, durationSeconds: number): void {
  const { caller, route } = exchange;
  if (!caller) return;
  const { usage } = charge;
  deps.ledger.record({
    requestId: exchange.id,
    at: new Date(exchange.arrivedAt).toISOString(),
    team: caller.project.team,
    project: caller.project.project,
    keyId: caller.principal.id,
    route: route.template,
    method: exchange.method,
    status: exchange.status,
    model,
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    totalTokens: usage.total_tokens,
    costNanos: charge.costNanos,
    estimated: charge.estimated,
    requestBytes: exchange.body?.bytes ?? 0,
    durationMs: Math.round(durationSeconds * 1000),
    traceId: exchange.trace?.traceId ?? null,
    ...modelRouting(exchange, model),
  });
}

const NOT_ROUTED = { requestedModel: null, fallbackFrom: null };

/** The name the client sent when another model served (an alias, a fallback), and the model a fallback replaced (SPEC 22). */
function modelRouting(exchange: Exchange, model: string): { requestedModel: string | null; fallbackFrom: string | null } {
  const requested = exchange.modelRoute?.requested;
  if (requested === undefined) return NOT_ROUTED;
  return { requestedModel: requested === model ? null : requested, fallbackFrom: exchange.fallbackFrom ?? null };
}

/** The Prometheus side of metering: tokens, cost and training jobs of a forwarded request. */
function countUsage(exchange: Exchange, model: string, charge: Charge, deps: CompletionDeps): void {
  const { route, caller } = exchange;
  if (!caller || route.metering === 'none') return;
  const { team, project } = caller.project;
  if (charge.usage.total_tokens > 0) deps.metrics.recordTokens(team, project, model, charge.usage);
  if (charge.costNanos > 0) deps.metrics.recordCost(team, project, model, charge.costNanos);
  const status = exchange.status;
  if (route.trainingJobKind && exchange.method === 'POST' && status >= 200 && status < 300) {
    deps.metrics.recordTrainingJob(team, project, route.trainingJobKind);
  }
}

const tenths = (ms: number): number => Math.round(ms * 10) / 10;

/** The one structured line per request: what an operator needs, never a credential. */
function logExchange(exchange: Exchange, charge: Charge | undefined, deps: CompletionDeps, durationSeconds: number): void {
  // The line's object is built only when it will be written (LOG_LEVEL=warn or silent: never).
  if (!deps.logger.isLevelEnabled('info')) return;
  const { route, caller, leg } = exchange;
  const usage = charge && charge.usage.total_tokens > 0 ? charge.usage : undefined;
  deps.logger.info(
    {
      requestId: exchange.id,
      trace_id: exchange.trace?.traceId,
      route: route.template,
      method: exchange.method,
      status: exchange.status,
      durationMs: Math.round(durationSeconds * 1e4) / 10,
      overheadMs: leg === undefined ? undefined : tenths(leg.sentAt - exchange.startedAt),
      ttfbMs: leg?.respondedAt === undefined ? undefined : tenths(leg.respondedAt - leg.sentAt),
      team: caller?.project.team,
      project: caller?.project.project,
      keyId: caller?.principal.id,
      model: exchange.chat?.model ?? leg?.seen?.model ?? undefined,
      promptTokens: usage?.prompt_tokens,
      completionTokens: usage?.completion_tokens,
      totalTokens: usage?.total_tokens,
      estimated: charge?.estimated ? true : undefined,
      aborted: leg !== undefined && !leg.completed ? true : undefined,
      error: exchange.errorCode,
    },
    'request',
  );
}
