import { describe, expect, it } from 'vitest';
import { type Check, rateLimitHeaders } from '../../../src/limits/index.js';

const check = (scope: Check['scope'], limit: Check['limit'], max: number, windowMs = 60_000): Check => ({
  scope,
  subject: `${scope} x`,
  limit,
  max,
  cost: 1,
  windowMs,
  key: `${scope}:${limit}`,
});

describe('rate-limit headers', () => {
  it('describes the scope with the least remaining, per kind of limit', () => {
    const checks = [check('key', 'rpm', 100), check('key', 'tpm', 1000), check('project', 'rpm', 50), check('project', 'tpm', 5000)];
    // key rpm: 100-20=80 left; project rpm: 50-45=5 left (tighter). key tpm: 1000-990=10 left (tighter).
    const headers = rateLimitHeaders(checks, [20, 990, 45, 300], [12, 179_560, 6000, 360_000]);
    expect(headers).toEqual({
      'x-ratelimit-limit-requests': '50',
      'x-ratelimit-remaining-requests': '5',
      'x-ratelimit-reset-requests': '6s',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '10',
      'x-ratelimit-reset-tokens': '2m59.56s',
      'ratelimit-policy': '"rpm";q=50;w=60, "tpm";q=1000;w=60',
      ratelimit: '"rpm";r=5;t=6, "tpm";r=10;t=180',
    });
  });

  it('describes the first scope in the plan (the key) when two have the same remaining', () => {
    // key rpm: 100-90=10 left; project rpm: 50-40=10 left: a tie, the key's limit is shown.
    const headers = rateLimitHeaders([check('key', 'rpm', 100), check('project', 'rpm', 50)], [90, 40], [30_000, 5_000]);
    expect(headers['x-ratelimit-limit-requests']).toBe('100');
    expect(headers['x-ratelimit-reset-requests']).toBe('30s');
    expect(headers['ratelimit-policy']).toBe('"rpm";q=100;w=60');
  });

  it('never reports negative remaining when usage overran the limit', () => {
    const headers = rateLimitHeaders([check('key', 'tpm', 1000)], [1400], [1000]);
    expect(headers['x-ratelimit-remaining-tokens']).toBe('0');
    expect(headers['ratelimit']).toBe('"tpm";r=0;t=1');
  });

  it('omits the token headers when only a request limit applies', () => {
    expect(rateLimitHeaders([check('key', 'rpm', 10)], [1], [60_000])).toEqual({
      'x-ratelimit-limit-requests': '10',
      'x-ratelimit-remaining-requests': '9',
      'x-ratelimit-reset-requests': '1m0s',
      'ratelimit-policy': '"rpm";q=10;w=60',
      ratelimit: '"rpm";r=9;t=60',
    });
  });

  it('gives concurrency the concurrent-requests unit and no window', () => {
    expect(rateLimitHeaders([check('key', 'concurrency', 16, 0)], [3], [0])).toEqual({
      'ratelimit-policy': '"concurrency";q=16;qu="concurrent-requests"',
      ratelimit: '"concurrency";r=13',
    });
  });

  it('is empty when no limit applies', () => {
    expect(rateLimitHeaders([], [], [])).toEqual({});
  });
});
