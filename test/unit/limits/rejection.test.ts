import { describe, expect, it } from 'vitest';
import { type Check, rejectionFor } from '../../../src/limits/index.js';

const tpm = (subject: string, max: number, cost: number): Check => ({ scope: 'key', subject, limit: 'tpm', max, cost, windowMs: 60_000, key: `k:${subject}` });
const rpm = (subject: string, max: number): Check => ({ scope: 'project', subject, limit: 'rpm', max, cost: 1, windowMs: 60_000, key: `k:${subject}` });
const refused = (used: number[], resetMs: number[]) => ({ admitted: false, used, resetMs, windowEnds: used.map(() => 0) });

describe('the 429 of a refused admission', () => {
  it('reports the refusing check even when its window resets within a millisecond', () => {
    const checks = [rpm('project team-a/prod', 10), tpm('key ci-bot', 100, 40)];
    const { check, error } = rejectionFor(checks, refused([3, 90], [30_000, 1]), 'USD');
    expect(check).toBe(checks[1]);
    expect(error.message).toBe('Rate limit reached for tokens per minute (tpm) on key ci-bot: limit 100, used 90, requested 40, retry in 1s.');
    expect(error.headers?.['retry-after']).toBe('1');
  });

  it('reports the first of two refusing checks that free at the same time', () => {
    const checks = [tpm('key ci-bot', 100, 40), tpm('project team-a/prod', 200, 40)];
    const { check } = rejectionFor(checks, refused([90, 190], [20_000, 20_000]), 'USD');
    expect(check).toBe(checks[0]);
  });

  it('reports the one that frees last when two refuse', () => {
    const checks = [tpm('key ci-bot', 100, 40), tpm('project team-a/prod', 200, 40)];
    const { check, error } = rejectionFor(checks, refused([90, 190], [20_000, 45_000]), 'USD');
    expect(check).toBe(checks[1]);
    expect(error.headers?.['retry-after']).toBe('45');
  });

  it('does not call a request that asks exactly the whole limit too large', () => {
    const { error } = rejectionFor([tpm('key ci-bot', 100, 100)], refused([1], [5_000]), 'USD');
    expect(error.message).toBe('Rate limit reached for tokens per minute (tpm) on key ci-bot: limit 100, used 1, requested 100, retry in 5s.');
    const tooLarge = rejectionFor([tpm('key ci-bot', 100, 101)], refused([0], [5_000]), 'USD');
    expect(tooLarge.error.message).toBe('Request too large for tokens per minute (tpm) on key ci-bot: limit 100, requested 101. Lower max_tokens or shorten the messages.');
  });

  it('answers with the first check rather than crash when the store refused but no check does by this rule', () => {
    const checks = [rpm('project team-a/prod', 10), tpm('key ci-bot', 100, 10)];
    const { check, error } = rejectionFor(checks, refused([1, 1], [7_000, 9_000]), 'USD');
    expect(check).toBe(checks[0]);
    expect(error.status).toBe(429);
  });
});
