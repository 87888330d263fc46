import { describe, expect, it } from 'vitest';
import { newLedgerRowId } from '../../../src/metering/index.js';

describe('ledger row id', () => {
  it('is a UUIDv7: the time in its first 48 bits, version 7, RFC variant', () => {
    const id = newLedgerRowId(Date.parse('2026-11-20T09:14:03.120Z'));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(Date.parse('2026-11-20T09:14:03.120Z'));
  });

  it('differs for every call within one millisecond', () => {
    const ids = Array.from({ length: 10_000 }, () => newLedgerRowId(1_763_630_043_120));
    expect(new Set(ids).size).toBe(10_000);
  });
});
