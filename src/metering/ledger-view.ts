import { nanosToAmount } from '../money.js';
import type { LedgerRow } from '../store/index.js';

/** A ledger row as the API shows it (SPEC 14.2): snake_case, cost in currency units. `/admin/usage/requests` and the usage export (SPEC 24) both answer this. */
export function ledgerRowView(row: LedgerRow): Record<string, string | number | boolean | null> {
  return {
    id: row.id,
    request_id: row.requestId,
    at: row.at,
    team: row.team,
    project: row.project,
    key: row.keyId,
    route: row.route,
    method: row.method,
    status: row.status,
    model: row.model,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    total_tokens: row.totalTokens,
    cost: nanosToAmount(row.costNanos),
    estimated: row.estimated,
    request_bytes: row.requestBytes,
    duration_ms: row.durationMs,
    trace_id: row.traceId,
    requested_model: row.requestedModel,
    fallback_from: row.fallbackFrom,
  };
}
