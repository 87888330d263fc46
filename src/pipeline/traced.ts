import type { Attributes } from '@opentelemetry/api';
import type { Admission } from '../limits/index.js';
import type { Charge } from '../metering/index.js';
import type { RequestOutcome } from '../tracing/index.js';
import type { Exchange } from './exchange.js';

/**
 * The pipeline's side of tracing, beside run() in index.ts (which marks each step's span): what
 * the limits span says, and completion's facts as the request's outcome.
 */

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
