import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Limiter } from '../../../src/limits/index.js';
import { startRedisCluster, type TestRedisCluster } from '../../helpers/redis-cluster.js';
import { admitAll, buildLimiter, keyPrincipal, limitsConfig, recordEvents, refusal, request, type LimitSettings } from './limiter-fixtures.js';

let cluster: TestRedisCluster;
let instances: Limiter[] = [];
let events: Array<ReturnType<typeof recordEvents>> = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
});

afterAll(async () => {
  await cluster.stop();
});

afterEach(async () => {
  await Promise.all(instances.map((limiter) => limiter.close()));
  // `closed` mode: a CROSSSLOT or any other store error would have failed an admission loudly.
  for (const e of events) expect(e.storeErrors).toBe(0);
});

/** Three gateway instances with their own Cluster connections, resolved once all are connected. */
async function startInstances(settings: LimitSettings): Promise<Limiter[]> {
  events = [recordEvents(), recordEvents(), recordEvents()];
  instances = events.map((e) => buildLimiter(limitsConfig({ ...settings, cluster: cluster.nodes, onStoreError: 'closed' }), e));
  await vi.waitFor(() => expect(instances.every((limiter) => limiter.storeConnected())).toBe(true), { timeout: 10_000 });
  return instances;
}

describe('limits on a 3-master Redis Cluster', () => {
  it('admits exactly 100 of 300 concurrent requests at rpm 100 across three instances', async () => {
    // The project limits put several keys in every script call: they must share one slot.
    const limiters = await startInstances({ keyPrefix: 'cluster-rpm:', projects: { 'team-a/*': { rpm: 1000, concurrency: 500 } } });
    const ciBot = keyPrincipal('ci-bot', { rpm: 100, tpm: 100_000 });
    const { admitted, rejected } = await admitAll(limiters, 300, () => request(ciBot, 'team-a/prod', 10));
    expect(admitted.length).toBe(100);
    expect(rejected.length).toBe(200);
    expect(new Set(rejected.map((e) => e.message))).toEqual(
      new Set(['Rate limit reached for requests per minute (rpm) on key ci-bot: limit 100, retry in 1m0s.']),
    );
  });

  it('keeps teams apart and settles reservations on the node that holds them', async () => {
    const [a, b] = await startInstances({ keyPrefix: 'cluster-settle:' });
    for (const team of ['team-a', 'team-b', 'team-c']) {
      const bot = keyPrincipal('bot', { tpm: 1000, concurrency: 1 }, team);
      const admission = await a!.admit(request(bot, `${team}/prod`, 300));
      expect(admission.headers['x-ratelimit-remaining-tokens']).toBe('700');
      admission.finish(100);
      await a!.settled();
      const probe = await b!.admit(request(bot, `${team}/prod`, 0));
      expect(probe.headers['x-ratelimit-remaining-tokens']).toBe('900');
      expect(probe.headers['ratelimit']).toBe('"tpm";r=900;t=60, "concurrency";r=0');
    }
  });

  it('admits and settles two teams\' requests made in the same tick (their keys on different masters), also with an empty key prefix', async () => {
    const [a, b] = await startInstances({ keyPrefix: '' });
    const bots = ['team-a', 'team-b'].map((team) => keyPrincipal('bot', { tpm: 1000 }, team));
    // Both scripts go out in one tick: batched into one pipeline, ioredis refused them both (503).
    const admissions = await Promise.all(bots.map((bot) => a!.admit(request(bot, `${bot.team}/prod`, 300))));
    // Both settles wait for the same flush: one script per team (the keys begin with their tag), not one with both teams' keys (CROSSSLOT).
    for (const admission of admissions) admission.finish(100);
    await a!.settled();
    for (const bot of bots) {
      const probe = await b!.admit(request(bot, `${bot.team}/prod`, 0));
      expect(probe.headers['x-ratelimit-remaining-tokens']).toBe('900');
    }
  });

  it('refuses a request reserving nothing on every instance once a budget is used up', async () => {
    const [a, b, c] = await startInstances({ keyPrefix: 'cluster-spent:', projects: { 'team-b/*': { tokensPerDay: 100 } } });
    const ciBot = keyPrincipal('ci-bot', { costPerDay: 0.000001 });
    await a!.admit(request(ciBot, 'team-a/prod', 10, 1000));
    const cost = await refusal(b!.admit(request(ciBot, 'team-a/prod', 0, 0)));
    expect(cost.code).toBe('insufficient_quota');
    expect(cost.message).toMatch(/^Daily cost budget \(costPerDay\) exhausted on key ci-bot: limit 0\.000001 USD, used 0\.000001 USD, requested 0 USD; /);
    const bBot = keyPrincipal('b-bot', {}, 'team-b');
    await a!.admit(request(bBot, 'team-b/prod', 100));
    const tokens = await refusal(c!.admit(request(bBot, 'team-b/prod', 0)));
    expect(tokens.code).toBe('insufficient_quota');
    expect(tokens.message).toMatch(/^Daily token budget \(tokensPerDay\) exhausted on project team-b\/prod: limit 100, used 100, requested 0, retry in /);
  });
});
