import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Admission, Limiter } from '../../../src/limits/index.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { buildLimiter, keyPrincipal, limitsConfig, recordEvents, refusal, request } from './limiter-fixtures.js';

// This file kills and restarts its own Redis, so it never shares one with other tests.
let redis: TestRedis;
let limiter: Limiter | undefined;

beforeAll(async () => {
  redis = await startRedis();
});

afterEach(async () => {
  await limiter?.close();
  limiter = undefined;
});

afterAll(async () => {
  await redis.stop();
});

const connected = (l: Limiter) => vi.waitFor(() => expect(l.storeConnected()).toBe(true), { timeout: 10_000, interval: 20 });

/** Admits and measures: an outage must answer at once (here: well within a generous 1 s). */
async function timedAdmit(l: Limiter, ...args: Parameters<typeof request>): Promise<{ admission: Admission; ms: number }> {
  const started = performance.now();
  const admission = await l.admit(request(...args));
  return { admission, ms: performance.now() - started };
}

describe('Redis outage', () => {
  it('keeps admitting on the per-instance fallback in open mode, counts store errors, and goes back to Redis when it returns', async () => {
    const events = recordEvents();
    limiter = buildLimiter(limitsConfig({ redisUrl: redis.url, keyPrefix: 'open:', onStoreError: 'open' }), events);
    await connected(limiter);
    const ciBot = keyPrincipal('ci-bot', { rpm: 3, concurrency: 10 });
    const held = await limiter.admit(request(ciBot, 'team-a/prod'));
    expect(held.headers['x-ratelimit-remaining-requests']).toBe('2');

    await redis.kill();
    const during: number[] = [];
    for (const remaining of ['2', '1', '0']) {
      const { admission, ms } = await timedAdmit(limiter, ciBot, 'team-a/prod');
      expect(admission.headers['x-ratelimit-remaining-requests']).toBe(remaining);
      during.push(ms);
    }
    // The fallback still limits, per instance.
    expect((await refusal(limiter.admit(request(ciBot, 'team-a/prod')))).status).toBe(429);
    expect(Math.max(...during)).toBeLessThan(1000);
    expect(limiter.ready()).toBe(true);
    expect(events.storeErrors).toBe(4);

    // A request admitted by Redis finishes during the outage: no throw, one more store error.
    expect(() => held.finish(0)).not.toThrow();
    await limiter.settled();
    expect(events.storeErrors).toBe(5);

    await redis.restart();
    await connected(limiter);
    const back = await limiter.admit(request(ciBot, 'team-a/prod'));
    expect(back.headers['x-ratelimit-remaining-requests']).toBe('2');
    const inspect = new Redis(redis.url);
    expect(await inspect.get('open:{team-a}:rpm:key:ci-bot')).toBe('1');
    inspect.disconnect();
    expect(events.storeErrors).toBe(5);
  });

  it('stops waiting for a Redis that hangs after the command timeout and serves from the fallback', async () => {
    const events = recordEvents();
    limiter = buildLimiter(limitsConfig({ redisUrl: redis.url, keyPrefix: 'hang:', onStoreError: 'open' }), events);
    await connected(limiter);
    const ciBot = keyPrincipal('ci-bot', { rpm: 3 });
    const inspect = new Redis(redis.url);
    try {
      // Scripts block for 5 s while the connection stays up: a hang, not a refusal.
      await inspect.client('PAUSE', 5000, 'WRITE');
      const { admission, ms } = await timedAdmit(limiter, ciBot, 'team-a/prod');
      expect(admission.headers['x-ratelimit-remaining-requests']).toBe('2');
      expect(ms).toBeLessThan(1000);
      expect(events.storeErrors).toBe(1);
    } finally {
      await inspect.client('UNPAUSE');
      inspect.disconnect();
    }
  });

  it('answers 503 store_unavailable and is not ready in closed mode while Redis is down, and recovers by itself', async () => {
    const events = recordEvents();
    limiter = buildLimiter(limitsConfig({ redisUrl: redis.url, keyPrefix: 'closed:', onStoreError: 'closed' }), events);
    await connected(limiter);
    const ciBot = keyPrincipal('ci-bot', { rpm: 3 });
    await limiter.admit(request(ciBot, 'team-a/prod'));
    expect(limiter.ready()).toBe(true);

    await redis.kill();
    const started = performance.now();
    const error = await refusal(limiter.admit(request(ciBot, 'team-a/prod')));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error.status).toBe(503);
    expect(error.code).toBe('store_unavailable');
    expect(error.headers['retry-after']).toBe('1');
    await vi.waitFor(() => expect(limiter!.ready()).toBe(false), { timeout: 10_000, interval: 20 });
    expect((await refusal(limiter.admit(request(ciBot, 'team-a/prod')))).code).toBe('store_unavailable');
    expect(events.storeErrors).toBe(2);

    // A request no limit applies to never asks the store, so it is admitted even now.
    const unlimited = await limiter.admit(request(keyPrincipal('free', {}), 'team-a/prod', 100));
    expect(unlimited.headers).toEqual({});
    expect(events.storeErrors).toBe(2);

    await redis.restart();
    await vi.waitFor(() => expect(limiter!.ready()).toBe(true), { timeout: 10_000, interval: 20 });
    const back = await limiter.admit(request(ciBot, 'team-a/prod'));
    expect(back.headers['x-ratelimit-remaining-requests']).toBe('2');
  });
});
