import { describe, expect, it } from 'vitest';
import { isInflight, refuses, type Check } from '../../../src/limits/index.js';

/**
 * SPEC 14.3, the one admission rule both stores follow (the Redis script spells it in Lua): a
 * request is refused when it needs more than remains, or when nothing remains — even a request
 * that reserves 0. A report-only check (a token limit on /v1/models) never refuses.
 */
const check = (max: number, cost: number, changes: Partial<Check> = {}): Check => ({
  scope: 'key',
  subject: 'key ci-bot',
  limit: 'tpm',
  max,
  cost,
  windowMs: 60_000,
  key: 'tg:{team-a}:key:ci-bot',
  ...changes,
});

describe('refuses', () => {
  it.each([
    ['admits a request that fills the limit exactly', 100, 40, 60, false],
    ['refuses a request one unit over', 100, 41, 60, true],
    ['admits a free request while something remains', 100, 0, 99, false],
    ['refuses a free request once the limit is used up', 100, 0, 100, true],
    ['refuses any request past an overrun', 100, 0, 130, true],
    ['admits the first request of an empty window up to max', 5, 5, 0, false],
  ])('%s (max %i, cost %i, used %i)', (_, max, cost, used, refused) => {
    expect(refuses(check(max, cost), used)).toBe(refused);
  });

  it('never refuses a report-only check, used up or not', () => {
    expect(refuses(check(100, 50, { reportOnly: true }), 100)).toBe(false);
    expect(refuses(check(100, 50, { reportOnly: true }), 90)).toBe(false);
  });
});

describe('isInflight', () => {
  it('is true for the concurrency limit only', () => {
    expect(isInflight(check(16, 1, { limit: 'concurrency', windowMs: 0 }))).toBe(true);
    expect(isInflight(check(100, 1, { limit: 'rpm' }))).toBe(false);
    expect(isInflight(check(100, 1, { limit: 'tokensPerDay' }))).toBe(false);
  });
});
