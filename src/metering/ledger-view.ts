import { nanosToAmount } from '../money.js';
import type { LedgerRow } from '../store/index.js';

/** How a view member is made from its row field: as stored, as 0/1 → boolean, or nano-units → currency units. */
export type LedgerViewKind = 'value' | 'bool' | 'amount';

/**
 * The members of a ledger row as the API shows it (SPEC 14.2), in order: snake_case name, the
 * row's field, and how the value is made. One table for `ledgerRowView` and for the export
 * worker, which builds the same view off the event loop from SQLite's columns.
 */
export const LEDGER_VIEW: ReadonlyArray<readonly [name: string, field: keyof LedgerRow, kind: LedgerViewKind]> = [
  ['id', 'id', 'value'],
  ['request_id', 'requestId', 'value'],
  ['at', 'at', 'value'],
  ['team', 'team', 'value'],
  ['project', 'project', 'value'],
  ['key', 'keyId', 'value'],
  ['route', 'route', 'value'],
  ['method', 'method', 'value'],
  ['status', 'status', 'value'],
  ['model', 'model', 'value'],
  ['prompt_tokens', 'promptTokens', 'value'],
  ['completion_tokens', 'completionTokens', 'value'],
  ['total_tokens', 'totalTokens', 'value'],
  ['cost', 'costNanos', 'amount'],
  ['estimated', 'estimated', 'bool'],
  ['request_bytes', 'requestBytes', 'value'],
  ['duration_ms', 'durationMs', 'value'],
  ['trace_id', 'traceId', 'value'],
  ['requested_model', 'requestedModel', 'value'],
  ['fallback_from', 'fallbackFrom', 'value'],
];

type ViewValue = string | number | boolean | null;

/** A ledger row as the API shows it (SPEC 14.2): snake_case, cost in currency units. `/admin/usage/requests` and the usage export (SPEC 24) both answer this. */
export function ledgerRowView(row: LedgerRow): Record<string, ViewValue> {
  const view: Record<string, ViewValue> = {};
  for (const [name, field, kind] of LEDGER_VIEW) {
    const value = row[field] as ViewValue;
    view[name] = kind === 'amount' ? nanosToAmount(value as number) : kind === 'bool' ? Boolean(value) : value;
  }
  return view;
}
