import type { Attributes } from '@opentelemetry/api';
import type { Admission } from '../limits/index.js';
import type { Charge } from '../metering/index.js';
import type { RequestOutcome, RequestTrace, StepName } from '../tracing/index.js';
import type { Exchange } from './exchange.js';

/**
 * The pipeline's side of tracing, in one place: each step runs under its span here (so no step
 * knows about spans), and completion's facts become the request's outcome. With tracing off
 * (`trace` undefined) a step is just called.
 */
export function traced<T>(trace: RequestTrace | undefined, name: StepName, work: () => Promise<T>, describe?: (result: T) => Attributes): Promise<T> {
  return trace === undefined ? work() : trace.step(name, work, describe);
}

/** The limits span: which scopes and limits applied (none: the request is not limited) and the decision. */
export function describeAdmission(admission: Admission): Attributes {
  const checks = admission.checks ?? [];
  return {
    'tollgate.limits.decision': 'admitted',
    'tollgate.limits.scopes': [...new Set(checks.map((check) => check.scope))],
    'tollgate.limits.checks': checks.map((check) => `${check.scope}:${check.limit}`),
  };
}

/** How the exchange ended, for its spans: the caller, the charge, what the upstream reported. */
export function outcomeOf(exchange: Exchange, charge: Charge | undefined): RequestOutcome {
  const { caller, leg } = exchange;
  const usage = leg?.seen?.usage ?? undefined;
  return {
    status: exchange.status,
    team: caller?.project.team,
    project: caller?.project.project,
    keyId: caller?.principal.id,
    costNanos: charge?.costNanos,
    // What the upstream reported, not an estimate the gateway charged in its absence.
    inputTokens: usage?.prompt_tokens,
    outputTokens: usage?.completion_tokens,
    responseModel: leg?.seen?.model ?? undefined,
    aborted: leg !== undefined && !leg.completed,
  };
}
