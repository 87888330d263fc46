import type { Attributes } from '@opentelemetry/api';
import type { Admission } from '../limits/index.js';
import type { Charge } from '../metering/index.js';
import type { RequestOutcome } from '../tracing/index.js';
import type { Exchange } from './exchange.js';

/**
 * The pipeline's side of tracing, beside run() in index.ts (which marks each step's span): what
 * the limits span says, and completion's facts as the request's outcome.
 */

type AdmissionChecks = NonNullable<Admission['checks']>;

const NO_CHECKS: AdmissionChecks = [];

/** Whether two requests' checks are of the same limits of the same scopes, in the same order. */
function sameLimits(a: AdmissionChecks, b: AdmissionChecks): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.scope !== b[i]!.scope || a[i]!.limit !== b[i]!.limit) return false;
  return true;
}

/**
 * The limits span's attributes: which scopes and limits applied (none: the request is not
 * limited) and the decision. Most requests of a key pass the same limits as the one before: its
 * attributes are then given again, frozen, rather than made anew (and the span encoder copies the
 * bytes it wrote for those frozen arrays last time).
 */
export function admissionDescriber(): (admission: Admission) => Attributes {
  let last: { readonly checks: AdmissionChecks; readonly attributes: Attributes } | undefined;
  return (admission) => {
    const checks = admission.checks ?? NO_CHECKS;
    if (last !== undefined && sameLimits(last.checks, checks)) return last.attributes;
    const attributes: Attributes = Object.freeze({
      'tollgate.limits.decision': 'admitted',
      'tollgate.limits.scopes': Object.freeze([...new Set(checks.map((check) => check.scope))]) as string[],
      'tollgate.limits.checks': Object.freeze(checks.map((check) => `${check.scope}:${check.limit}`)) as string[],
    });
    last = { checks: checks.map(({ scope, limit }) => ({ scope, limit })), attributes };
    return attributes;
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
