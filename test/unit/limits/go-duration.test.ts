import { describe, expect, it } from 'vitest';
import { formatGoDuration } from '../../../src/limits/index.js';

describe('formatGoDuration (x-ratelimit-reset-* values)', () => {
  it.each([
    [1000, '1s'],
    [12, '12ms'],
    [360_000, '6m0s'],
    [179_560, '2m59.56s'],
    [60_000, '1m0s'],
    [59_999, '59.999s'],
    [1500, '1.5s'],
    [3_600_000, '1h0m0s'],
    [5_430_250, '1h30m30.25s'],
    [0, '0s'],
    [-5, '0s'],
    [0.4, '0s'],
    [999.6, '1s'],
  ])('formats %d ms as %s', (ms, expected) => {
    expect(formatGoDuration(ms)).toBe(expected);
  });
});
