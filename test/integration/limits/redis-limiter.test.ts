import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Limiter, type LimitEvents, RedisStore, StoreUnavailableError } from '../../../src/limits/index.js';
import { connectRedis } from '../../../src/redis/index.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { describeLimiterBehaviour } from './limiter-behaviour.js';
import { admitAll, buildLimiter, keyPrincipal, limitsConfig, readScope, recordEvents, refusal, request, type LimitSettings } from './limiter-fixtures.js';

let redis: TestRedis;
let inspect: Redis;
let prefixSeq = 0;

beforeAll(async () => {
  redis = await startRedis();
  inspect = new Redis(redis.url);
});

afterAll(async () => {
  inspect.disconnect();
  await redis.stop();
});

/** A limiter on the test Redis, resolved once connected. `closed`, so a fallback could never hide a failure. */
async function redisLimiter(settings: LimitSettings, events: LimitEvents = recordEvents(), leaseTtlMs?: number): Promise<Limiter> {
  const limiter = buildLimiter(limitsConfig({ onStoreError: 'closed', ...settings, redisUrl: redis.url }), events, leaseTtlMs);
  await vi.waitFor(() => expect(limiter.storeConnected()).toBe(true), { timeout: 5000 });
  return limiter;
}

describeLimiterBehaviour('redis', (settings, events) => redisLimiter({ ...settings, keyPrefix: `behaviour${++prefixSeq}:` }, events));

describe('limits shared by three gateway instances on one Redis', () => {
  let instances: Limiter[] = [];
  let events: Array<ReturnType<typeof recordEvents>> = [];

  const startInstances = async (settings: LimitSettings, leaseTtlMs?: number): Promise<Limiter[]> => {
    events = [recordEvents(), recordEvents(), recordEvents()];
    instances = await Promise.all(events.map((e) => redisLimiter(settings, e, leaseTtlMs)));
    return instances;
  };

  afterEach(async () => {
    await Promise.all(instances.map((limiter) => limiter.close()));
    for (const e of events) expect(e.storeErrors).toBe(0);
  });

  it('admits exactly 100 of 300 concurrent requests at rpm 100', async () => {
    const limiters = await startInstances({ keyPrefix: 'shared-rpm:' });
    const ciBot = keyPrincipal('ci-bot', { rpm: 100 });
    const { admitted, rejected } = await admitAll(limiters, 300, () => request(ciBot, 'team-a/prod'));
    expect(admitted.length).toBe(100);
    expect(rejected.length).toBe(200);
    expect((await readScope(inspect, 'shared-rpm:{team-a}:key:ci-bot')).counters).toEqual({ rpm: 100 });
  });

  it('holds exactly 10 of 300 concurrent requests in flight at concurrency 10, and the slots come back after finish', async () => {
    const limiters = await startInstances({ keyPrefix: 'shared-concurrency:' });
    const ciBot = keyPrincipal('ci-bot', { concurrency: 10 });
    const first = await admitAll(limiters, 300, () => request(ciBot, 'team-a/prod'));
    expect(first.admitted.length).toBe(10);
    expect((await readScope(inspect, 'shared-concurrency:{team-a}:key:ci-bot')).slots).toBe(10);
    for (const admission of first.admitted) admission.finish(0);
    await Promise.all(limiters.map((limiter) => limiter.settled()));
    expect((await readScope(inspect, 'shared-concurrency:{team-a}:key:ci-bot')).slots).toBe(0);
    const second = await admitAll(limiters, 300, () => request(ciBot, 'team-a/prod'));
    expect(second.admitted.length).toBe(10);
  });

  it('admits exactly 10 of 300 concurrent 100-token requests at tpm 1000', async () => {
    const limiters = await startInstances({ keyPrefix: 'shared-tpm:' });
    const ciBot = keyPrincipal('ci-bot', { tpm: 1000 });
    const { admitted } = await admitAll(limiters, 300, () => request(ciBot, 'team-a/prod', 100));
    expect(admitted.length).toBe(10);
    expect((await readScope(inspect, 'shared-tpm:{team-a}:key:ci-bot')).counters).toEqual({ tpm: 1000 });
  });

  it('admits exactly the tightest limit when key and project limits combine', async () => {
    const limiters = await startInstances({ keyPrefix: 'shared-mixed:', projects: { 'team-a/prod': { tpm: 2000, concurrency: 50 } } });
    // Key: rpm 100, tpm 5000 (50 requests); project: tpm 2000 (20 requests), 50 in flight.
    const ciBot = keyPrincipal('ci-bot', { rpm: 100, tpm: 5000 });
    const { admitted } = await admitAll(limiters, 300, () => request(ciBot, 'team-a/prod', 100));
    expect(admitted.length).toBe(20);
    expect((await readScope(inspect, 'shared-mixed:{team-a}:key:ci-bot')).counters).toEqual({ rpm: 20, tpm: 2000 });
    expect((await readScope(inspect, 'shared-mixed:{team-a}:project:team-a/prod')).counters).toEqual({ tpm: 2000 });
  });

  it('keeps each scope in one hash under the key prefix with a {team} hash tag: a counter and its window end per limit, slots per instance', async () => {
    const [limiter] = await startInstances({ keyPrefix: 'layout:', projects: { 'team-a/prod': { rpm: 50 } } });
    const ciBot = keyPrincipal('ci-bot', { rpm: 5, tpm: 100, concurrency: 2, tokensPerDay: 1000 });
    const [seconds] = await inspect.time();
    const now = Number(seconds) * 1000;
    await limiter!.admit(request(ciBot, 'team-a/prod', 10));
    expect((await inspect.keys('layout:*')).sort()).toEqual(['layout:{team-a}:key:ci-bot', 'layout:{team-a}:project:team-a/prod']);
    const fields = Object.keys(await inspect.hgetall('layout:{team-a}:key:ci-bot'));
    const lease = fields.find((field) => /^L:[0-9a-f]{8}:\d+$/.test(field))!;
    expect(fields.sort()).toEqual(['c', lease].sort());
    const { counters, leaseEnds, numbers } = await readScope(inspect, 'layout:{team-a}:key:ci-bot');
    expect(counters).toEqual({ rpm: 1, tpm: 10, tokensPerDay: 10 });
    expect(numbers.inflight).toBe(1);
    // The lease lapses a TTL (30 s by default) after it was taken, unless renewed.
    expect(leaseEnds[0]! - now).toBeGreaterThan(28_000);
    expect(leaseEnds[0]! - now).toBeLessThanOrEqual(31_000);
    // Windows end a minute (rpm, tpm) and at the next UTC midnight (tokensPerDay) after the first charge.
    expect(numbers.counters.rpm!.end - now).toBeGreaterThan(58_000);
    expect(numbers.counters.rpm!.end - now).toBeLessThanOrEqual(61_000);
    expect(numbers.counters.tokensPerDay!.end % 86_400_000).toBeLessThan(2000);
    // The hash outlives its longest window and lease, then leaves Redis.
    const dayEnd = numbers.counters.tokensPerDay!.end;
    const ttl = await inspect.pttl('layout:{team-a}:key:ci-bot');
    expect(ttl).toBeGreaterThan(dayEnd - now);
    expect(ttl).toBeLessThanOrEqual(dayEnd - now + 62_000);
    expect(numbers.expires).toBeGreaterThan(dayEnd);
    expect((await readScope(inspect, 'layout:{team-a}:project:team-a/prod')).counters).toEqual({ rpm: 1 });
  });

  it('keeps every counter of a scope whatever kinds it has (a monthly budget without the kinds before it in the table)', async () => {
    const [limiter] = await startInstances({ keyPrefix: 'sparse:', projects: { 'team-a/prod': { costPerMonth: 2, concurrency: 5 } } });
    const ciBot = keyPrincipal('ci-bot', {});
    const admission = await limiter!.admit({ ...request(ciBot, 'team-a/prod', 7), estimatedCostNanos: 1_500_000_000 });
    admission.finish({ tokens: 7, costNanos: 250_000_000 });
    await limiter!.settled();
    await limiter!.admit({ ...request(ciBot, 'team-a/prod', 7), estimatedCostNanos: 1_000_000_000 });
    expect(await readScope(inspect, 'sparse:{team-a}:project:team-a/prod')).toMatchObject({ counters: { costPerMonth: 1_250_000_000 }, slots: 1 });
    const refused = await refusal(limiter!.admit({ ...request(ciBot, 'team-a/prod', 7), estimatedCostNanos: 800_000_000 }));
    expect(refused.code).toBe('insufficient_quota');
  });

  it('gives back the slots of an instance that died once their lease expires, while a live instance keeps its own', async () => {
    const [a, b] = await startInstances({ keyPrefix: 'leases:' }, 400);
    const ciBot = keyPrincipal('ci-bot', { concurrency: 2 });
    const scope = 'leases:{team-a}:key:ci-bot';
    await a!.admit(request(ciBot, 'team-a/prod'));
    await a!.admit(request(ciBot, 'team-a/prod'));
    expect((await refusal(b!.admit(request(ciBot, 'team-a/prod')))).code).toBe('rate_limit_exceeded');

    // Alive: instance a renews its leases, so they outlive their first expiry.
    const firstExpiry = Math.max(...(await readScope(inspect, scope)).leaseEnds);
    await vi.waitFor(async () => expect(Number((await inspect.time())[0]) * 1000).toBeGreaterThan(firstExpiry + 200), { timeout: 5000, interval: 50 });
    expect((await refusal(b!.admit(request(ciBot, 'team-a/prod')))).code).toBe('rate_limit_exceeded');

    // Dead: a stops without finishing its requests; nothing renews the leases any more.
    await a!.close();
    const admitted = await vi.waitFor(() => b!.admit(request(ciBot, 'team-a/prod')), { timeout: 5000, interval: 50 });
    expect(admitted.headers['ratelimit']).toBe('"concurrency";r=1');
  });

  it('sends a settle no admission carries at the end of the turn, not with the next lease renewal (every 10 s at the default 30 s lease)', async () => {
    await startInstances({ keyPrefix: 'turn-end:' });
    const admission = await instances[0]!.admit(request(keyPrincipal('ci-bot', { tpm: 1000 }), 'team-a/prod', 300));
    expect((await readScope(inspect, 'turn-end:{team-a}:key:ci-bot')).counters).toEqual({ tpm: 300 });
    // No settled() here: that would send it by itself.
    admission.finish(100);
    await vi.waitFor(async () => expect((await readScope(inspect, 'turn-end:{team-a}:key:ci-bot')).counters).toEqual({ tpm: 100 }), { timeout: 3000, interval: 20 });
  });

  it('renews a lease only in the scope whose concurrency it counts: a key that only counts requests never holds a slot, so a concurrency limit it is given later starts free', async () => {
    const [a] = await startInstances({ keyPrefix: 'renewed-scopes:', projects: { 'team-a/*': { concurrency: 1 } } }, 300);
    const keyScope = 'renewed-scopes:{team-a}:key:ci-bot';
    const admission = await a!.admit(request(keyPrincipal('ci-bot', { rpm: 10 }), 'team-a/prod'));
    // In flight past one lease period: its lease (the project's) is renewed every 100 ms meanwhile.
    const { leaseEnds } = await readScope(inspect, 'renewed-scopes:{team-a}:project:team-a/prod');
    await vi.waitFor(async () => expect((await readScope(inspect, 'renewed-scopes:{team-a}:project:team-a/prod')).leaseEnds[0]).toBeGreaterThan(leaseEnds[0]! + 300), {
      timeout: 5000,
      interval: 50,
    });
    expect(await readScope(inspect, keyScope)).toMatchObject({ counters: { rpm: 1 }, slots: 0 });
    admission.finish(0);
    await a!.settled();

    const next = await a!.admit(request(keyPrincipal('ci-bot', { rpm: 10, concurrency: 1 }), 'team-a/prod'));
    expect(next.headers['ratelimit']).toBe('"rpm";r=8;t=60, "concurrency";r=0');
    next.finish(0);
  });
});

describe('the Redis limit store on its own', () => {
  it('disconnects its connection on close: reads and admissions then fail at once as unavailable', async () => {
    const connection = connectRedis({ url: redis.url, cluster: undefined })!;
    const store = new RedisStore(connection, { replySilenceMs: 1000, leaseTtlMs: 30_000, onBackgroundError: () => undefined });
    expect(await store.whenReady(5000)).toBe(true);
    expect(await store.read('store-close:{team-a}:key:ci-bot')).toEqual({ inflight: 0, counters: {} });
    await store.close();
    await vi.waitFor(() => expect(connection.status).toBe('end'), { timeout: 2000 });
    await expect(store.read('store-close:{team-a}:key:ci-bot')).rejects.toThrow(new StoreUnavailableError('redis is end'));
    await expect(store.acquire([])).rejects.toThrow(new StoreUnavailableError('redis is end'));
  });
});
