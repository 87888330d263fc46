import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEYS } from '../../helpers/keys.js';
import { startRedis } from '../../helpers/redis.js';
import { startRedisCluster } from '../../helpers/redis-cluster.js';
import { eventually } from '../../helpers/wait.js';

const KEY_ONE = 'tg-test-team-limit-one-aaaaaaaaaaaa';
const KEY_TWO = 'tg-test-team-limit-two-bbbbbbbbbbbb';
const admin = { authorization: bearer(KEYS.admin) };

interface SharedStore {
  readonly redis: Record<string, unknown>;
  stop(): Promise<void>;
}
const STORES: Record<string, () => Promise<SharedStore>> = {
  'one Redis': async () => {
    const redis = await startRedis();
    return { redis: { url: redis.url }, stop: () => redis.stop() };
  },
  'a 3-master Redis Cluster': async () => {
    const cluster = await startRedisCluster();
    return { redis: { cluster: cluster.nodes }, stop: () => cluster.stop() };
  },
};

/**
 * SPEC 16: a team's limits hold over all of its traffic — every key and project together —
 * exactly across instances sharing Redis (one Cluster slot per team: its scope shares the
 * team's hash tag with its keys' and projects').
 */
describe.each(Object.keys(STORES))('team limits across three instances sharing %s', (storeName) => {
  let store: SharedStore;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gateways: RunningGateway[];

  beforeAll(async () => {
    [store, service, inference] = await Promise.all([STORES[storeName]!(), startTrainingService(), startInferenceHost()]);
    // A config (and so an SQLite file) per instance: limits are what they share, through Redis.
    const config = () => testConfig(
      { service: service.url, inference: inference.url },
      {
        redis: store.redis,
        auth: {
          keys: [
            { id: 'team-t-one', sha256: digest(KEY_ONE), team: 'team-t', limits: { rpm: 1000 } },
            { id: 'team-t-two', sha256: digest(KEY_TWO), team: 'team-t' },
          ],
          admin: { keys: ADMIN_ENTRIES },
        },
        teams: [{ id: 'team-t', limits: { rpm: 30 } }],
        rateLimits: { projects: { 'team-t/*': { rpm: 1000 } } },
      },
    );
    gateways = await Promise.all([startGateway(config()), startGateway(config()), startGateway(config())]);
    for (const gw of gateways) await eventually(async () => ((await (await fetch(`${gw.url}/readyz`)).json()) as { store: string }).store === 'connected');
  }, 60_000);
  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.close()));
    await Promise.all([service.close(), inference.close(), store.stop()]);
  });

  it('admits exactly rpm 30 of 90 concurrent requests over two keys and three projects, and names the team in the 429', async () => {
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        request(gateways[i % 3]!.url)
          .get('/v1/models')
          .set('authorization', bearer(i % 2 === 0 ? KEY_ONE : KEY_TWO))
          .set('openai-project', `team-t/p${i % 3}`),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(30);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(60);
    expect(refused[0]!.body.error.message).toMatch(/^Rate limit reached for requests per minute \(rpm\) on team team-t: limit 30, retry in (1m0s|\d+s)\.$/);
    // The tightest scope is the team's: 30 a minute, none left.
    expect([refused[0]!.headers['x-ratelimit-limit-requests'], refused[0]!.headers['x-ratelimit-remaining-requests']]).toEqual(['30', '0']);
    const record = await request(gateways[1]!.url).get('/admin/teams/team-t').set(admin);
    expect([record.body.remaining, record.body.spend.day.requests]).toEqual([{ rpm: 0 }, 30]);
  });
});
