import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Limiter, NotificationEvent } from '../../../src/limits/index.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { startRedisCluster, type TestRedisCluster } from '../../helpers/redis-cluster.js';
import { admitAll, buildLimiter, keyPrincipal, limitsConfig, recordEvents, refusal, request, type LimitSettings } from './limiter-fixtures.js';

/**
 * SPEC 24: a budget's thresholds fire exactly once per threshold, scope and window, decided where
 * the spend is counted — the Redis script (three instances on one real redis-server, or on a
 * 3-master Redis Cluster) or the memory store. A test sink collects what the limiters publish; delivery is the outbox's.
 */
let redis: TestRedis;
let cluster: TestRedisCluster;
let prefixSeq = 0;

beforeAll(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startRedisCluster()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([redis.stop(), cluster.stop()]);
});

const NANOS = 1e9;
const DAY_MS = 86_400_000;

function today(): { start: string; end: string } {
  const start = Date.now() - (Date.now() % DAY_MS);
  return { start: new Date(start).toISOString(), end: new Date(start + DAY_MS).toISOString() };
}

function thisMonth(): { start: string; end: string } {
  const now = new Date();
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
    end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
  };
}

/** What the events say, without the time they were decided at. */
const decided = (events: readonly NotificationEvent[]): unknown[] =>
  [...events].sort((a, b) => a.id.localeCompare(b.id)).map(({ id, type, team, data }) => ({ id, type, team, data }));

type Store = 'memory' | 'redis' | 'redis cluster';
const STORES: Array<[Store, number]> = [
  ['memory', 1],
  ['redis', 3],
  ['redis cluster', 3],
];

/** Where a test's limiters count: memory (no URL), one Redis, or a 3-master Redis Cluster. */
const storeSettings = (store: Store): LimitSettings =>
  store === 'redis' ? { redisUrl: redis.url } : store === 'redis cluster' ? { cluster: cluster.nodes } : { redisUrl: '' };

describe.each(STORES)('budget alerts in the %s store (%i instances)', (store, count) => {
  let limiters: Limiter[] = [];
  let published: NotificationEvent[] = [];

  const start = async (settings: LimitSettings = {}, thresholds?: number[]): Promise<Limiter[]> => {
    published = [];
    const sink = { publish: (event: NotificationEvent) => void published.push(event) };
    // Every instance of one test shares one key prefix: the same counters in Redis.
    const config = limitsConfig({ onStoreError: 'closed', ...settings, ...storeSettings(store), keyPrefix: `alerts${++prefixSeq}:` });
    const withThresholds = thresholds ? { ...config, notifications: { ...config.notifications, thresholds } } : config;
    limiters = Array.from({ length: count }, () => buildLimiter(withThresholds, recordEvents(), undefined, sink));
    for (const l of limiters) await vi.waitFor(() => expect(l.storeConnected()).toBe(true), { timeout: 5000 });
    return limiters;
  };

  afterEach(async () => {
    await Promise.all(limiters.map((l) => l.close()));
  });

  it('fires 80% and 100% of a key cost budget exactly once each when 300 requests cross them at once', async () => {
    await start();
    const ciBot = keyPrincipal('ci-bot', { costPerDay: 10 });
    const { admitted, rejected } = await admitAll(limiters, 300, () => request(ciBot, 'team-a/prod', 0, 0.05 * NANOS));
    expect(admitted.length).toBe(200);
    expect(rejected.length).toBe(100);
    const scope = { type: 'key', team: 'team-a', key: 'ci-bot' };
    const window = today();
    const base = { scope, limit: 'costPerDay', window, budget: 10, unit: 'USD', soft: false };
    expect(decided(published)).toEqual([
      { id: `budget/key/team-a/ci-bot/costPerDay/${window.start.slice(0, 10)}/0.8`, type: 'budget.threshold', team: 'team-a', data: { ...base, spent: 8, threshold: 0.8 } },
      { id: `budget/key/team-a/ci-bot/costPerDay/${window.start.slice(0, 10)}/1`, type: 'budget.exhausted', team: 'team-a', data: { ...base, spent: 10, threshold: 1 } },
    ]);
    // Finishing at the estimate changes no counter: nothing more is decided.
    for (const admission of admitted) admission.finish({ tokens: 0, costNanos: 0.05 * NANOS });
    await Promise.all(limiters.map((l) => l.settled()));
    expect(published.length).toBe(2);
  });

  it('fires from a settle: an overrun of the actual cost is where the spend lands', async () => {
    await start();
    const ciBot = keyPrincipal('ci-bot', { costPerDay: 1 });
    const admission = await limiters[0]!.admit(request(ciBot, 'team-a/prod', 0, 0.5 * NANOS));
    expect(published).toEqual([]);
    admission.finish({ tokens: 0, costNanos: 1 * NANOS });
    await limiters[0]!.settled();
    await vi.waitFor(() => expect(published.map((e) => [e.type, e.data['threshold'], e.data['spent']])).toEqual([
      ['budget.threshold', 0.8, 1],
      ['budget.exhausted', 1, 1],
    ]));
    // Used up, a hard budget still refuses, as before.
    const refused = await refusal(limiters[count - 1]!.admit(request(ciBot, 'team-a/prod', 0, 0.01 * NANOS)));
    expect(refused.status).toBe(429);
    expect(refused.code).toBe('insufficient_quota');
    expect(published.length).toBe(2);
  });

  it('hears a settle carried by the next admission to the same scope (no call of its own)', async () => {
    await start();
    const ciBot = keyPrincipal('ci-bot', { costPerDay: 1 });
    const first = await limiters[0]!.admit(request(ciBot, 'team-a/prod', 0, 0.1 * NANOS));
    // The overrun waits for the end of this turn; the admission made in the same turn takes it.
    first.finish({ tokens: 0, costNanos: 0.85 * NANOS });
    const second = await limiters[0]!.admit(request(ciBot, 'team-a/prod', 0, 0.1 * NANOS));
    expect(published.map((e) => [e.type, e.data['threshold'], e.data['spent']])).toEqual([['budget.threshold', 0.8, 0.85]]);
    second.finish({ tokens: 0, costNanos: 0.15 * NANOS });
    await limiters[0]!.settled();
    await vi.waitFor(() => expect(published.map((e) => [e.type, e.data['threshold'], e.data['spent']])).toEqual([
      ['budget.threshold', 0.8, 0.85],
      ['budget.exhausted', 1, 1],
    ]));
  });

  it('a soft project budget serves past 100% and still alerts, once per threshold', async () => {
    await start({ projects: { 'team-a/*': { costPerMonth: 1, soft: true } } }, [0.5, 0.8, 1]);
    const ciBot = keyPrincipal('ci-bot', {});
    const { admitted, rejected } = await admitAll(limiters, 60, () => request(ciBot, 'team-a/prod', 0, 0.05 * NANOS));
    expect(admitted.length).toBe(60);
    expect(rejected.length).toBe(0);
    const window = thisMonth();
    const scope = { type: 'project', team: 'team-a', project: 'prod' };
    const base = { scope, limit: 'costPerMonth', window, budget: 1, unit: 'USD', soft: true };
    const id = (t: number): string => `budget/project/team-a/prod/costPerMonth/${window.start.slice(0, 10)}/${t}`;
    expect(decided(published)).toEqual([
      { id: id(0.5), type: 'budget.threshold', team: 'team-a', data: { ...base, spent: 0.5, threshold: 0.5 } },
      { id: id(0.8), type: 'budget.threshold', team: 'team-a', data: { ...base, spent: 0.8, threshold: 0.8 } },
      { id: id(1), type: 'budget.exhausted', team: 'team-a', data: { ...base, spent: 1, threshold: 1 } },
    ]);
  });

  it('alerts on a token budget of a key, and not on rates (tpm)', async () => {
    await start();
    const ciBot = keyPrincipal('ci-bot', { tokensPerDay: 1000, tpm: 100_000 });
    const { admitted } = await admitAll(limiters, 12, () => request(ciBot, 'team-a/prod', 100));
    expect(admitted.length).toBe(10);
    expect(published.map((e) => [e.type, e.data['limit'], e.data['unit'], e.data['spent']]).sort()).toEqual([
      ['budget.exhausted', 'tokensPerDay', 'tokens', 1000],
      ['budget.threshold', 'tokensPerDay', 'tokens', 800],
    ]);
  });

  it('takes new thresholds on a reload; an empty list turns budget alerts off', async () => {
    const [limiter] = await start();
    const ciBot = keyPrincipal('ci-bot', { tokensPerDay: 100 });
    const config = limitsConfig({ onStoreError: 'closed', ...storeSettings(store), keyPrefix: `alerts${prefixSeq}:` });
    limiter!.configure({ ...config, notifications: { ...config.notifications, thresholds: [0.25] } });
    await limiter!.admit(request(ciBot, 'team-a/prod', 30));
    expect(published.map((e) => [e.type, e.data['threshold'], e.data['spent']])).toEqual([['budget.threshold', 0.25, 30]]);
    limiter!.configure({ ...config, notifications: { ...config.notifications, thresholds: [] } });
    await limiter!.admit(request(ciBot, 'team-a/prod', 70));
    expect(published.length).toBe(1);
  });

  it('a limiter with no event sink decides nothing (and still refuses as before)', async () => {
    const limiter = buildLimiter(limitsConfig({ onStoreError: 'closed', ...storeSettings(store), keyPrefix: `alerts-none${++prefixSeq}:` }), recordEvents());
    limiters = [limiter];
    await vi.waitFor(() => expect(limiter.storeConnected()).toBe(true), { timeout: 5000 });
    const ciBot = keyPrincipal('ci-bot', { costPerDay: 1 });
    await limiter.admit(request(ciBot, 'team-a/prod', 0, 1 * NANOS));
    const refused = await refusal(limiter.admit(request(ciBot, 'team-a/prod', 0, 1)));
    expect(refused.status).toBe(429);
  });
});
