import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { replacementDelayMs, workerCount } from '../../../src/cluster/index.js';
import { ConfigError, parseConfig } from '../../../src/config/index.js';

const config = (server: string, redis = '') =>
  parseConfig(`server: ${server}\n${redis}upstreams: {service: {url: "http://a"}, inference: {url: "http://b"}}\n`, {});

describe('server.workers', () => {
  it('is 1 by default, the number given, or one per core for auto', () => {
    const redis = 'redis: {url: "redis://127.0.0.1:6379"}\n';
    expect(workerCount(config('{}'))).toBe(1);
    expect(workerCount(config('{workers: 3}', redis))).toBe(3);
    expect(workerCount(config('{workers: auto}', redis))).toBe(availableParallelism());
  });

  it('refuses several workers on the memory store, and allows one', () => {
    expect(() => workerCount(config('{workers: 2}'))).toThrow(ConfigError);
    expect(() => workerCount(config('{workers: 2}'))).toThrow('server.workers: 2 (2 processes) needs redis.url or redis.cluster: with the memory store each worker would count limits on its own');
    expect(workerCount(config('{workers: 1}'))).toBe(1);
  });

  it('refuses 0 and words other than auto', () => {
    expect(() => config('{workers: 0}')).toThrow(ConfigError);
    expect(() => config('{workers: all}')).toThrow(ConfigError);
  });
});

describe('replacing a dead worker', () => {
  it('is at once after a worker that lived, then backs off 250 ms doubling per young death, up to 30 s', () => {
    expect([0, 1, 2, 3, 4, 7, 8, 20].map(replacementDelayMs)).toEqual([0, 250, 500, 1000, 2000, 16_000, 30_000, 30_000]);
  });
});
