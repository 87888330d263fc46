import { describe, expect, it } from 'vitest';
import { dayRange } from '../../src/calendar.js';

describe('dayRange', () => {
  it('covers the inclusive UTC days as [first midnight, midnight after the last)', () => {
    expect(dayRange('2025-01-31', '2025-02-28')).toEqual({ start: '2025-01-31T00:00:00.000Z', end: '2025-03-01T00:00:00.000Z' });
    expect(dayRange('2024-02-29', '2024-02-29')).toEqual({ start: '2024-02-29T00:00:00.000Z', end: '2024-03-01T00:00:00.000Z' });
    expect(dayRange('2025-12-31', '2025-12-31').end).toBe('2026-01-01T00:00:00.000Z');
  });

  it.each(['2025-02-29', '2025-13-01', '2025-1-01', '20250101', '', '2025-01-01T00:00:00Z'])('refuses %j as a day', (day) => {
    expect(() => dayRange(day, '2025-03-01')).toThrow(RangeError);
    expect(() => dayRange('2025-03-01', day)).toThrow(`to must be a calendar day as YYYY-MM-DD, got "${day}"`);
  });
});
