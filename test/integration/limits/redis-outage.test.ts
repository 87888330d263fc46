import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Admission, Limiter } from '../../../src/limits/index.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { buildLimiter, keyPrincipal, limitsConfig, readScope, recordEvents, refusal, request } from './limiter-fixtures.js';

// This file kills and restarts its own Redis, so it never shares one with other tests.
let redis: TestRedis;
let limiter: Limiter | undefined;

beforeAll(async () => {
  // DEBUG SLEEP stalls Redis the way a long fork or a slow disk does: the connection stays up.
  redis = await startRedis(['--enable-debug-command', 'yes']);
});

afterEach(async () => {
  await limiter?.close();
  limiter = undefined;
});

afterAll(async () => {
  await redis.stop();
});

/** The product's default reply deadline: the tests of a Redis that hangs or stalls rely on it. */
const SILENCE_MS = 100;

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

    // A request admitted by Redis finishes during the outage: no throw; its settle waits for Redis.
    expect(() => held.finish(0)).not.toThrow();
    await limiter.settled();
    expect(events.storeErrors).toBe(4);

    await redis.restart();
    await connected(limiter);
    const back = await limiter.admit(request(ciBot, 'team-a/prod'));
    expect(back.headers['x-ratelimit-remaining-requests']).toBe('2');
    await limiter.settled();
    const inspect = new Redis(redis.url);
    // The restarted Redis holds this request only: the slot of the one finished during the outage is free.
    expect(await readScope(inspect, 'open:{team-a}:key:ci-bot')).toMatchObject({ counters: { rpm: 1 }, slots: 1 });
    inspect.disconnect();
    expect(events.storeErrors).toBe(4);
  });

  it('stops waiting for a Redis that hangs after the command timeout and serves from the fallback', async () => {
    const events = recordEvents();
    limiter = buildLimiter(limitsConfig({ redisUrl: redis.url, keyPrefix: 'hang:', onStoreError: 'open', commandTimeoutMs: SILENCE_MS }), events);
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

/** Resolves once Redis has stopped answering (a PING left unanswered for 30 ms): the stall began. */
async function stallBegan(probe: Redis): Promise<void> {
  for (;;) {
    const answered = await Promise.race([probe.ping().then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, 30, false))]);
    if (!answered) return;
  }
}

describe('Redis after a stall longer than the reply deadline', () => {
  it('counts a settle Redis did not answer in time as a store error, and its refund still lands when Redis wakes', async () => {
    const events = recordEvents();
    limiter = buildLimiter(limitsConfig({ redisUrl: redis.url, keyPrefix: 'stall-settle:', onStoreError: 'closed', commandTimeoutMs: SILENCE_MS }), events);
    await connected(limiter);
    const admission = await limiter.admit(request(keyPrincipal('ci-bot', { tpm: 1000 }), 'team-a/prod', 300));
    const inspect = new Redis(redis.url);
    const sleeper = new Redis(redis.url);
    try {
      const stall = sleeper.call('DEBUG', 'SLEEP', '1');
      await stallBegan(inspect);
      admission.finish(100);
      // The settle goes out at the end of the turn; settled() waits for it to fail at its deadline.
      await limiter.settled();
      expect(events.storeErrors).toBe(1);
      await stall;
      // The script waited in Redis's queue and ran once it woke.
      expect(await readScope(inspect, 'stall-settle:{team-a}:key:ci-bot')).toMatchObject({ counters: { tpm: 100 } });
    } finally {
      inspect.disconnect();
      sleeper.disconnect();
    }
  });

  const outcome = (result: PromiseSettledResult<Admission>): string =>
    result.status === 'fulfilled' ? 'admitted' : (result.reason as { code: string }).code;

  it.each([
    ['closed', ['store_unavailable', 'store_unavailable', 'store_unavailable', 'store_unavailable', 'store_unavailable']],
    ['open', ['admitted', 'admitted', 'admitted', 'rate_limit_exceeded', 'rate_limit_exceeded']],
  ] as const)('converges to what Redis holds in %s mode: the stalled admissions charge nothing there afterwards', async (mode, during) => {
    const prefix = `stall-${mode}:`;
    limiter = buildLimiter(limitsConfig({ redisUrl: redis.url, keyPrefix: prefix, onStoreError: mode, commandTimeoutMs: SILENCE_MS }), recordEvents());
    await connected(limiter);
    const ciBot = keyPrincipal('ci-bot', { concurrency: 3, rpm: 10 });
    const inspect = new Redis(redis.url);
    const sleeper = new Redis(redis.url);
    try {
      const stall = sleeper.call('DEBUG', 'SLEEP', '2');
      await stallBegan(inspect);
      const results = await Promise.allSettled(Array.from({ length: 5 }, () => limiter!.admit(request(ciBot, 'team-a/prod'))));
      // Which of them the fallback admits depends on when each one's deadline passed: compare as a set.
      expect(results.map(outcome).sort()).toEqual([...during].sort());
      for (const result of results) if (result.status === 'fulfilled') result.value.finish(0);
      await stall;
      // The stalled scripts ran once Redis woke up; their charges were given back when their replies came.
      await limiter.settled();
      expect(await readScope(inspect, `${prefix}{team-a}:key:ci-bot`)).toMatchObject({ counters: { rpm: 0 }, slots: 0 });

      const held = [await limiter.admit(request(ciBot, 'team-a/prod')), await limiter.admit(request(ciBot, 'team-a/prod'))];
      const third = await limiter.admit(request(ciBot, 'team-a/prod'));
      expect(third.headers['x-ratelimit-remaining-requests']).toBe('7');
      expect((await refusal(limiter.admit(request(ciBot, 'team-a/prod')))).message).toMatch(/^Concurrency limit reached on key ci-bot: limit 3/);
      for (const admission of [...held, third]) admission.finish(0);
      await limiter.settled();
      expect(await readScope(inspect, `${prefix}{team-a}:key:ci-bot`)).toMatchObject({ counters: { rpm: 3 }, slots: 0 });
    } finally {
      inspect.disconnect();
      sleeper.disconnect();
    }
  });
});
