import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LEDGER_VIEW, ledgerRowView } from '../../../src/metering/index.js';
import { nanosToAmount } from '../../../src/money.js';
import { ledgerRow } from '../../integration/store/store-fixtures.js';

describe('the ledger row view (SPEC 14.2)', () => {
  it('shows every member in the table\'s order, snake_case, cost in currency units', () => {
    const row = ledgerRow({ costNanos: 9_400, estimated: true, traceId: 't', requestedModel: 'fast', fallbackFrom: 'slow' });
    expect(ledgerRowView(row)).toEqual({
      id: row.id, request_id: 'req-1', at: '2025-01-15T12:00:00.000Z', team: 'team-a', project: 'prod', key: 'key-1', route: '/v1/chat/completions',
      method: 'POST', status: 200, model: 'OpenPipe/Qwen3-14B-Instruct', prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, cost: 0.0000094,
      estimated: true, request_bytes: 512, duration_ms: 35, trace_id: 't', requested_model: 'fast', fallback_from: 'slow',
    });
    expect(Object.keys(ledgerRowView(row))).toEqual(LEDGER_VIEW.map(([name]) => name));
  });

  // The export worker makes `cost` as nanos ÷ 1e9 (no module of ours in the worker): the same number.
  it('nano-units ÷ 1e9 is the same double as nanosToAmount for every integer the ledger can hold', () => {
    fc.assert(fc.property(fc.maxSafeNat(), (nanos) => nanos / 1e9 === nanosToAmount(nanos)), { numRuns: 20_000 });
    for (const nanos of [0, 1, 9_400, 999_999_999, 1_000_000_000, 123_456_789_012_345, Number.MAX_SAFE_INTEGER]) expect(nanos / 1e9).toBe(nanosToAmount(nanos));
  });
});
