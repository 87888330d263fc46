import { describe, expect, it } from 'vitest';
import { daySlices, postgresDialect, sqliteDialect } from '../../../src/store/index.js';

/**
 * The days a usage aggregate reads per statement: PostgreSQL reads the inclusive range at once;
 * SQLite (synchronous) one day per statement, so requests run between them. A slice too many or
 * too few would add or drop a day of usage from GET /admin/usage.
 */
describe('usage aggregate day slices', () => {
  const range = { start: '2025-02-27T00:00:00.000Z', end: '2025-03-02T00:00:00.000Z' };

  it('reads PostgreSQL as one inclusive range, its last day the day before the end', () => {
    expect(daySlices(postgresDialect, range.start, range.end)).toEqual([['2025-02-27', '2025-03-01']]);
  });

  it('reads SQLite one UTC day at a time, each day once, across a month end', () => {
    expect(daySlices(sqliteDialect, range.start, range.end)).toEqual([
      ['2025-02-27', '2025-02-27'],
      ['2025-02-28', '2025-02-28'],
      ['2025-03-01', '2025-03-01'],
    ]);
  });

  it('reads a single day as itself on both', () => {
    expect(daySlices(sqliteDialect, '2025-01-15T00:00:00.000Z', '2025-01-16T00:00:00.000Z')).toEqual([['2025-01-15', '2025-01-15']]);
    expect(daySlices(postgresDialect, '2025-01-15T00:00:00.000Z', '2025-01-16T00:00:00.000Z')).toEqual([['2025-01-15', '2025-01-15']]);
  });
});
